/**
 * Publishing reviews at the network (`POST /tf/vasps/{vaspDID}/review`) and comparing what it holds with ours. A push
 * that fails stays recorded as failed; a review's own push tries again for about 45 s (`pushWithRetries`), the nightly
 * reconciliation after that.
 */
import type { Pool } from 'pg';
import type { NetworkClient } from '../network/client';
import { markVaspReview, reviewedVasps } from '../network/reviews';
import { allPushes, recordPush, unpushed } from './store';
import { REVIEW_VALUES, type ReviewDifference, type ReviewValue } from './types';

export interface PushOutcome {
  pushed: number;
  failed: number;
}

/** What a failure is recorded as: the error's class and code, never a body that could echo data. */
function failureOf(e: unknown): string {
  const err = e as { name?: string; code?: string; message?: string };
  return [err.name ?? 'Error', err.code, err.message?.slice(0, 200)].filter(Boolean).join(': ');
}

/** Passes over the pending pushes at most: a pass repeats only for rows a concurrent review changed under it. */
const MAX_PASSES = 3;

/**
 * Sends the pushes not yet at the network (of one counterparty, or all), up to `limit` a pass, recording each
 * outcome. A push whose row changed meanwhile (`stale`) may have overwritten the newer value at the network, so the
 * row is pending again and the next pass sends it; the reconciliation covers what is left after the last pass.
 */
export async function pushPending(
  deps: { pool: Pool; network: NetworkClient },
  opts: { reviewedVaspDid?: string; limit?: number } = {},
): Promise<PushOutcome> {
  const outcome: PushOutcome = { pushed: 0, failed: 0 };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let stale = 0;
    for (const push of await unpushed(deps.pool, opts.limit ?? 500, opts.reviewedVaspDid)) {
      let ok = true;
      let recorded: Awaited<ReturnType<typeof recordPush>>;
      try {
        await markVaspReview(deps.network, push.vaspDid, push);
        recorded = await recordPush(deps.pool, push, { ok: true });
      } catch (e) {
        ok = false;
        recorded = await recordPush(deps.pool, push, { ok: false, error: failureOf(e) });
      }
      if (recorded === 'stale') stale++;
      else if (recorded === 'recorded') outcome[ok ? 'pushed' : 'failed']++;
    }
    if (stale === 0) break;
  }
  return outcome;
}

/** When a review's push is tried again after a failure: the reconciliation takes over after the last. */
export const PUSH_RETRY_DELAYS_MS: readonly number[] = [1_000, 3_000, 10_000, 30_000];

/**
 * `pushPending` for one counterparty, tried again after each delay while a push failed or the pass itself did (the
 * network or the database unavailable for a moment), so that a review reaches the network in seconds rather than at
 * the nightly reconciliation. Resolves with the last outcome; rejects only when the last try failed as a whole.
 */
export async function pushWithRetries(
  deps: { pool: Pool; network: NetworkClient },
  reviewedVaspDid: string,
  opts: { delaysMs?: readonly number[]; wait?: (ms: number) => Promise<void> } = {},
): Promise<PushOutcome> {
  const delays = opts.delaysMs ?? PUSH_RETRY_DELAYS_MS;
  const wait = opts.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await pushPending(deps, { reviewedVaspDid });
      if (outcome.failed === 0 || attempt >= delays.length) return outcome;
    } catch (e) {
      if (attempt >= delays.length) throw e;
    }
    await wait(delays[attempt]!);
  }
}

/** The network's reviews by `vaspDid`: reviewed DID → value. */
export async function networkReviewsOf(network: NetworkClient, vaspDid: string): Promise<Record<string, ReviewValue>> {
  const held: Record<string, ReviewValue> = {};
  for (const value of REVIEW_VALUES) for (const did of await reviewedVasps(network, vaspDid, value)) held[did] = value;
  return held;
}

/** Where `held` (the network's reviews by `vaspDid`) differs from what we publish for it. */
export async function differencesFor(
  pool: Pool,
  vaspDid: string,
  held: Record<string, ReviewValue>,
): Promise<ReviewDifference[]> {
  const ours = new Map(
    (await allPushes(pool)).filter((p) => p.vaspDid === vaspDid).map((p) => [p.reviewedVaspDid, p.reviewValue]),
  );
  const differences: ReviewDifference[] = [];
  for (const [reviewedVaspDid, value] of ours)
    if (held[reviewedVaspDid] !== value)
      differences.push({ vaspDid, reviewedVaspDid, ours: value, network: held[reviewedVaspDid] ?? null });
  for (const [reviewedVaspDid, value] of Object.entries(held))
    if (!ours.has(reviewedVaspDid)) differences.push({ vaspDid, reviewedVaspDid, ours: null, network: value });
  return differences.sort((a, b) => a.reviewedVaspDid.localeCompare(b.reviewedVaspDid));
}
