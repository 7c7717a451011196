/**
 * A run's diff: the desired set (each registry entry's network address, plus the master address of every tagged entry)
 * against what the network listed, as the run's delta (additions and removals, numbered), how the additions go
 * (single registrations or uploads) and the upload chunks. The SQL is address-book/store/diff.ts.
 */
import type { DeltaSummary } from './types';
import { ValidationError } from '../lib/errors';
import { deleteChunks } from './store/chunks';
import {
  analyzeListing,
  attachDeltaTable,
  attachHead,
  attachRest,
  committedHead,
  createDeltaTable,
  dropDeltaTable,
  headIsWholeDelta,
  inSnapshot,
  mirroredAddresses,
  planChunks,
  recordDelta,
  setWatermark,
  stageAffectedFromMirror,
  useDiffMemory,
  writeDelta,
  writeHead,
  writeRest,
  type DeltaCounts,
} from './store/diff';
import { getRun, setRunPhase, type RunRow } from './store/runs';
import { deltaCounts, hasListing } from './store/staging';
import { withTransaction } from '../db/transaction';
import type { PoolClient } from 'pg';
import type { AddressBookDeps } from './deps';

/** The delta as the workflow sees it: counts only. */
export async function summary(deps: Pick<AddressBookDeps, 'pool'>, r: RunRow): Promise<DeltaSummary> {
  const counts = await deltaCounts(deps.pool, r.run_id);
  return {
    desired: Number(r.desired ?? 0),
    networkBefore: Number(r.network_before ?? 0),
    networkBeforeDistinct: counts.networkBeforeDistinct,
    toAdd: Number(r.to_add ?? 0),
    toUpdate: Number(r.to_update ?? 0),
    toRemove: Number(r.to_remove ?? 0),
    removeRows: counts.removeRows,
    method: r.method ?? 'none',
    chunks: counts.chunks,
  };
}

/** The end of a whole diff: method, chunks, the delta attached as the run's partition, the counts and watermark. */
async function finishDelta(
  deps: AddressBookDeps,
  c: PoolClient,
  input: { runId: string; vaspDid: string },
  incremental: boolean,
  counts: DeltaCounts,
  watermark: number,
): Promise<void> {
  const s = deps.settings;
  const adds = Number(counts.to_add) + Number(counts.to_update);
  const method = adds === 0 ? 'none' : adds <= s.registerThreshold ? 'register' : 'upload';
  if (method === 'upload') await planChunks(c, input.runId, '', s);
  await attachDeltaTable(c, input.runId);
  // An incremental run saw only the changed addresses: the whole desired set is the mirror plus its delta.
  let desired = Number(counts.desired);
  if (incremental)
    desired = (await mirroredAddresses(c, input.vaspDid)) + Number(counts.to_add) - Number(counts.to_remove);
  await recordDelta(c, input.runId, {
    desired,
    toAdd: counts.to_add,
    toUpdate: counts.to_update,
    toRemove: counts.to_remove,
    method,
    watermark,
  });
}

/**
 * A first sync (a full run whose listing is empty, so every desired row is an addition) starts its uploads before
 * the whole delta exists: this writes the first H = headChunks × chunkRows desired rows in address order as rows
 * 1..H, plans their chunks and commits, in a snapshot taken like the whole diff's, whose watermark (W1) becomes the
 * run's. The rest (addresses above the head's last) follows in computeRest, in a later snapshot, while the head's
 * chunks upload. The run's delta is then partitioned by seq: the head and the rest are written unindexed and get
 * their keys once complete, like the whole diff's delta. Any other run, a head setting of 0, or a head that would
 * go through registerCustomer computes the whole delta at once (complete: true), as does a desired set of at most
 * H rows, which is then all head.
 */
export async function computeHead(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string },
): Promise<{ complete: true; delta: DeltaSummary } | { complete: false; headRows: number; headChunks: number }> {
  const { pool } = deps;
  const r = await getRun(pool, input.runId);
  if (r.delta_ready) return { complete: true, delta: await summary(deps, r) };
  const committed = await committedHead(pool, input.runId);
  if (committed) return { complete: false, headRows: committed.rows, headChunks: committed.chunks };
  const s = deps.settings;
  const h = s.headChunks * s.chunkRows;
  const listed = r.listing_done ? await hasListing(pool, input.runId, 'before') : undefined;
  if (
    r.mode !== 'full' ||
    listed !== false ||
    Number(r.network_before ?? 0) !== 0 ||
    h === 0 ||
    h <= s.registerThreshold
  ) {
    return { complete: true, delta: await computeDelta(deps, input) };
  }
  await setRunPhase(pool, input.runId, 'diff');
  let whole = false;
  await inSnapshot(pool, async (c, watermark) => {
    // Leftovers of an older run's begin step (which created the delta partition empty).
    await dropDeltaTable(c, input.runId);
    await deleteChunks(c, input.runId);
    await useDiffMemory(c);
    await createDeltaTable(c, input.runId, '_head');
    // One row more than the head tells whether there is a rest.
    const n = await writeHead(c, input.runId, input.vaspDid, h + 1);
    if (n <= h) {
      // The whole desired set fits the head: it is the run's whole delta.
      whole = true;
      await headIsWholeDelta(c, input.runId);
      await finishDelta(
        deps,
        c,
        input,
        false,
        { desired: String(n), to_add: String(n), to_update: '0', to_remove: '0' },
        watermark,
      );
    } else {
      await attachHead(c, input.runId, h);
      await planChunks(c, input.runId, '_head', s);
      await setWatermark(c, input.runId, watermark);
    }
  });
  if (whole) return { complete: true, delta: await summary(deps, await getRun(pool, input.runId)) };
  const done = (await committedHead(pool, input.runId))!;
  return { complete: false, headRows: done.rows, headChunks: done.chunks };
}

/**
 * The rest of a first sync after its head (computeHead): the desired rows whose address sorts above the head's last,
 * numbered from H + 1, their chunks numbered after the head's, in a snapshot of its own (S2, its one statement's).
 * The run keeps the head's watermark W1, the lower one: a row changed between W1 and S2 in the head's range was
 * uploaded as of W1 and has a change_seq above W1, so the next incremental run compares it with the mirror (built from
 * this delta, i.e. what was uploaded); one in the rest's range already shows S2's value, so comparing it again finds
 * nothing. No registry lock: any later snapshot holds every write up to W1.
 */
async function computeRest(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string },
  h: { rows: number; last: string; chunks: number },
): Promise<void> {
  const s = deps.settings;
  // Read committed: the registry is read by one statement (the insert), which sees one snapshot by itself, and the
  // head's uploads update the run row meanwhile, which a repeatable-read transaction could not update after.
  await withTransaction(deps.pool, async (c) => {
    await deleteChunks(c, input.runId, h.chunks);
    await useDiffMemory(c);
    await createDeltaTable(c, input.runId, '_rest');
    const n = await writeRest(c, input.runId, input.vaspDid, h);
    if (n > 0) await planChunks(c, input.runId, '_rest', s, { seq: h.rows, chunkNo: h.chunks });
    await attachRest(c, input.runId, h.rows, h.rows + n);
  });
}

/**
 * The diff, in one statement over one snapshot of the registry: the desired set against the listing. The network
 * lists no asset per row, so the two sides are compared on the address string as the network stores it
 * (`<address>:<tag>` included), and on customerRef; when several registry entries map to one network address (the same
 * address for two assets, a master shared by several tags) the untagged entry wins, then the first asset in order.
 * Numbers the rows to add and to remove, decides between single registrations and uploads, and cuts the uploads into
 * chunks that respect both the row and the byte limit. Running it again after it completed changes nothing.
 */
export async function computeDelta(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string },
): Promise<DeltaSummary> {
  const { pool } = deps;
  const r = await getRun(pool, input.runId);
  if (r.delta_ready) return summary(deps, r);
  const head = await committedHead(pool, input.runId);
  if (head) {
    await setRunPhase(pool, input.runId, 'diff');
    await computeRest(deps, input, head);
    return summary(deps, await getRun(pool, input.runId));
  }
  const incremental = r.mode === 'incremental';
  if (!incremental && !r.listing_done) throw new ValidationError('runId', 'the listing of this run is not complete');
  await setRunPhase(pool, input.runId, 'diff');
  // An older run's begin step created the delta partition empty; the diff now creates it itself (see createDeltaTable).
  await dropDeltaTable(pool, input.runId);
  await inSnapshot(pool, async (c, watermark) => {
    await deleteChunks(c, input.runId);
    // An incremental run starts from the mirror, for the addresses the registry changed since the last run.
    if (incremental) await stageAffectedFromMirror(c, input.runId, input.vaspDid, watermark);
    else await analyzeListing(c, input.runId);
    await useDiffMemory(c);
    await createDeltaTable(c, input.runId);
    const counts = await writeDelta(c, { runId: input.runId, vaspDid: input.vaspDid, affectedOnly: incremental });
    await finishDelta(deps, c, input, incremental, counts, watermark);
  });
  return summary(deps, await getRun(pool, input.runId));
}
