/**
 * Applying a run's delta at the network: deletions in batches that fit a request line, single registrations for a
 * small delta, and waiting for the network's asynchronous processing to show in its count. A row the network refuses
 * for good is recorded with its reason and the rest goes on.
 */
import { AuthenticationError, ForbiddenError, isAppError, type AppError } from '../lib/errors';
import { getRun, recordRejections, setProgress, setRunPhase } from './store/runs';
import { additionsAfter, refusedNewAdditions, refusedRemovalRows, removalsAfter } from './store/staging';
import { withTransaction } from '../db/transaction';
import { DELETE_QUERY_BUDGET, deleteAddresses, networkTotal, registerCustomer } from '../network/address-book';
import type { AddressBookDeps } from './deps';

/**
 * Whether the network refused these rows for good (a 4xx about the request: a malformed or unknown address), which is
 * recorded per row while the run goes on. A refusal of our credential (401 after a fresh token, 403) is about every
 * row to come: it fails the run, whose report says what was applied, and the next run starts from the network's
 * listing. Transient failures never get here: the client rides them out (network/retry.ts).
 */
function refusesTheseRows(e: unknown): e is AppError {
  return isAppError(e) && !e.retryable && !(e instanceof AuthenticationError || e instanceof ForbiddenError);
}

/** Deletes what the registry no longer has, in batches that fit a request line; resumes after the last batch. */
export async function applyRemovals(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string },
): Promise<{ removed: number; rejected: number; refusedListingRows: number }> {
  const { pool, network } = deps;
  await setRunPhase(pool, input.runId, 'removing');
  let through = Number((await getRun(pool, input.runId)).removed_through);
  let removed = 0;
  let rejected = 0;
  for (;;) {
    const rows = await removalsAfter(pool, input.runId, through, 2000);
    if (rows.length === 0) break;
    let i = 0;
    while (i < rows.length) {
      const batch: string[] = [];
      let len = 0;
      while (i < rows.length) {
        const enc = encodeURIComponent(rows[i]!.address).length + 3;
        if (batch.length > 0 && len + enc > DELETE_QUERY_BUDGET) break;
        batch.push(rows[i]!.address);
        len += enc;
        i += 1;
      }
      const last = Number(rows[i - 1]!.seq);
      try {
        await deleteAddresses(network, input.vaspDid, batch);
        removed += batch.length;
        await setProgress(pool, input.runId, 'removed_through', last);
      } catch (e) {
        if (!refusesTheseRows(e)) throw e;
        // The network refused this batch for good: record why, go on with the rest.
        await withTransaction(pool, async (c) => {
          await recordRejections(
            c,
            input.runId,
            batch.map((address) => ({ action: 'remove' as const, address, reason: `deletion refused: ${e.message}` })),
            deps.settings.maxStoredRejections,
          );
          await setProgress(c, input.runId, 'removed_through', last);
        });
        rejected += batch.length;
      }
      through = last;
      deps.heartbeat?.({ removedThrough: through });
    }
  }
  return { removed, rejected, refusedListingRows: await refusedRemovalRows(pool, input.runId) };
}

/** A small delta: one `registerCustomer` per row, a few at a time; a row the network refuses is recorded. */
export async function registerAdds(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string },
): Promise<{ registered: number; rejected: number; rejectedNew: number }> {
  const { pool, network } = deps;
  await setRunPhase(pool, input.runId, 'adding');
  const concurrency = deps.settings.registerConcurrency;
  let through = Number((await getRun(pool, input.runId)).registered_through);
  let registered = 0;
  let rejected = 0;
  for (;;) {
    const rows = await additionsAfter(pool, input.runId, through, concurrency);
    if (rows.length === 0) break;
    const outcomes = await Promise.all(
      rows.map(async (row) => {
        try {
          await registerCustomer(network, {
            vaspDID: input.vaspDid,
            address: row.address,
            customerRef: row.customer_ref,
            asset: row.asset,
          });
          return undefined;
        } catch (e) {
          // 409: the network says it has it already, which is what we wanted.
          if (isAppError(e) && e.httpStatus === 409) return undefined;
          if (refusesTheseRows(e))
            return {
              action: 'add' as const,
              address: row.address,
              asset: row.asset,
              customerRef: row.customer_ref,
              reason: e.message,
            };
          throw e;
        }
      }),
    );
    const refused = outcomes.filter((o): o is NonNullable<typeof o> => o !== undefined);
    through = Number(rows[rows.length - 1]!.seq);
    await withTransaction(pool, async (c) => {
      await recordRejections(c, input.runId, refused, deps.settings.maxStoredRejections);
      await setProgress(c, input.runId, 'registered_through', through);
    });
    registered += rows.length - refused.length;
    rejected += refused.length;
    deps.heartbeat?.({ registeredThrough: through });
  }
  return { registered, rejected, rejectedNew: await refusedNewAdditions(pool, input.runId) };
}

/**
 * Waits (bounded) until the network's listing total reaches the expected count: at most `expected` after
 * deletions ('down'), at least `expected` after additions ('up'). Processing is asynchronous at the network, so
 * this is how a run knows it is done. Stops early when the count has moved away from `from` (the count before the
 * changes) and then stood still for `settleMs`: rows the network refused never arrive. Does not fail on timeout:
 * the verification names what is missing.
 */
export async function awaitNetworkCount(
  deps: Pick<AddressBookDeps, 'pool' | 'network' | 'heartbeat'>,
  input: {
    runId: string;
    vaspDid: string;
    from: number;
    expected: number;
    direction: 'down' | 'up';
    timeoutMs: number;
    pollMs: number;
    settleMs: number;
  },
): Promise<{ reached: boolean; count: number; waitedMs: number; settled: boolean }> {
  await setRunPhase(deps.pool, input.runId, 'processing');
  const started = Date.now();
  let last: number | undefined;
  let lastChange = started;
  for (;;) {
    const count = await networkTotal(deps.network, input.vaspDid);
    const now = Date.now();
    if (count !== last) {
      last = count;
      lastChange = now;
    }
    const reached = input.direction === 'down' ? count <= input.expected : count >= input.expected;
    const waitedMs = now - started;
    const settled = count !== input.from && now - lastChange >= input.settleMs;
    if (reached || settled || waitedMs >= input.timeoutMs) return { reached, count, waitedMs, settled };
    deps.heartbeat?.({ count, expected: input.expected });
    await new Promise((r) => setTimeout(r, Math.min(input.pollMs, Math.max(0, input.timeoutMs - waitedMs))));
  }
}
