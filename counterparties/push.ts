/**
 * Publishing reviews at the network (`POST /tf/vasps/{vaspDID}/review`) and comparing what it holds with ours. A push
 * that fails stays recorded as failed; a review's own push rides out transient failures for 45 s
 * (`publishAfterWrite`), the nightly reconciliation sends what is left.
 */
import type { Pool } from 'pg';
import type { NetworkClient } from '../network/client';
import { markVaspReview, reviewedVasps } from '../network/reviews';
import type { TransientRetryPolicy } from '../network/retry';
import type { Logger } from '../lib/logger';
import { fillJurisdictions } from './jurisdiction';
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
      const sent = await markVaspReview(deps.network, push.vaspDid, push).then(
        () => ({ ok: true }) as const,
        (e: unknown) => ({ ok: false, error: failureOf(e) }) as const,
      );
      const recorded = await recordPush(deps.pool, push, sent);
      if (recorded === 'stale') stale++;
      else if (recorded === 'recorded') outcome[sent.ok ? 'pushed' : 'failed']++;
    }
    if (stale === 0) break;
  }
  return outcome;
}

/** How a review's own push rides out a network down for a moment (5xx, timeouts, 429s), before the reconciliation. */
export const REVIEW_PUSH_RETRY: TransientRetryPolicy = {
  maxElapsedMs: 45_000,
  initialDelayMs: 1_000,
  maxDelayMs: 15_000,
};

/**
 * What follows a review's write, beside the request's answer: its pushes, each tried again through transient failures
 * (`retry`, the network client's own), and the counterparty's jurisdiction from the directory. What still fails is
 * logged and left to the reconciliation; a push the network took but the database could not record stays pending and
 * is sent again. Never rejects.
 */
export async function publishAfterWrite(
  deps: { pool: Pool; network: NetworkClient; logger: Logger },
  counterpartyDid: string,
  retry: TransientRetryPolicy = REVIEW_PUSH_RETRY,
): Promise<void> {
  const network = deps.network.retrying(retry);
  const warn = (what: string) => (e: unknown) =>
    deps.logger.warn({ err: e, counterparty: counterpartyDid }, `${what} failed; the reconciliation retries`);
  await Promise.all([
    pushPending({ pool: deps.pool, network }, { reviewedVaspDid: counterpartyDid }).then(({ failed }) => {
      if (failed > 0)
        deps.logger.warn(
          { counterparty: counterpartyDid, failed },
          'counterparty reviews not pushed; the reconciliation sends them',
        );
    }, warn('pushing counterparty reviews')),
    fillJurisdictions({ pool: deps.pool, network: deps.network }, { vaspDid: counterpartyDid }).catch(
      warn("filling the counterparty's jurisdiction"),
    ),
  ]);
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
