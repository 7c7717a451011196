import type { Pool, PoolClient } from 'pg';
import type { DeltaSummary, ReconcilePhase, ReconcileReport, ReconcileTrigger } from '../types';
import { ValidationError } from '../../lib/errors';
import type { CursorKey } from '../../lib/listing/cursor';
import { exactTimestamp, keyset, pageOf, type ListOrder, type Page } from '../../db/listing';

/** One address-book reconciliation run as the console lists it (address_book_runs, without the staging details). */
export interface AddressBookRunRow {
  runId: string;
  vaspDid: string;
  workflowId: string;
  trigger: string;
  mode: string;
  status: string;
  phase: string;
  startedAt: string;
  finishedAt: string | null;
  desired: number | null;
  toAdd: number | null;
  toUpdate: number | null;
  toRemove: number | null;
  rejected: number;
  error: string | null;
}

interface Raw {
  run_id: string;
  vasp_did: string;
  workflow_id: string;
  trigger: string;
  mode: string;
  status: string;
  phase: string;
  started_at: Date;
  finished_at: Date | null;
  desired: string | null;
  to_add: string | null;
  to_update: string | null;
  to_remove: string | null;
  rejected: string;
  error: string | null;
  cursor_at: string;
}

const num = (v: string | null) => (v === null ? null : Number(v));

export async function listAddressBookRuns(
  pool: Pool,
  filter: { vaspDids?: string[]; status?: string },
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<AddressBookRunRow>> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.vaspDids) {
    params.push(filter.vaspDids);
    where.push(`vasp_did = any($${params.length}::text[])`);
  }
  if (filter.status) {
    params.push(filter.status);
    where.push(`status = $${params.length}`);
  }
  const ks = keyset(params, 'started_at', 'run_id::text', page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  params.push(page.limit + 1);
  const { rows } = await pool.query<Raw>(
    `select run_id, vasp_did, workflow_id, trigger, mode, status, phase, started_at, finished_at, desired, to_add, to_update,
            to_remove, rejected, error, ${exactTimestamp('started_at')} as cursor_at
       from address_book_runs ${where.length ? `where ${where.join(' and ')}` : ''} ${ks.orderBy} limit $${params.length}`,
    params,
  );
  return pageOf(
    rows,
    page.limit,
    (r) => ({ at: r.cursor_at, id: r.run_id }),
    (r) => ({
      runId: r.run_id,
      vaspDid: r.vasp_did,
      workflowId: r.workflow_id,
      trigger: r.trigger,
      mode: r.mode,
      status: r.status,
      phase: r.phase,
      startedAt: r.started_at.toISOString(),
      finishedAt: r.finished_at?.toISOString() ?? null,
      desired: num(r.desired),
      toAdd: num(r.to_add),
      toUpdate: num(r.to_update),
      toRemove: num(r.to_remove),
      rejected: Number(r.rejected),
      error: r.error,
    }),
  );
}

type Db = Pick<Pool | PoolClient, 'query'>;

/** A run's row in address_book_runs: its state between activities, so every step resumes where the last stopped. */
export interface RunRow {
  run_id: string;
  vasp_did: string;
  status: string;
  mode: 'full' | 'incremental';
  watermark: string | null;
  listed_pages: number;
  listing_done: boolean;
  network_before: string | null;
  verify_pages: number;
  verify_done: boolean;
  network_after: string | null;
  delta_ready: boolean;
  mirror_built: boolean;
  desired: string | null;
  to_add: string | null;
  to_update: string | null;
  to_remove: string | null;
  method: DeltaSummary['method'] | null;
  removed_through: string;
  registered_through: string;
  rejected: string;
}

/** The run's row; a ValidationError for a run that does not exist. */
export async function getRun(db: Db, runId: string): Promise<RunRow> {
  const { rows } = await db.query<RunRow>('select * from address_book_runs where run_id = $1', [runId]);
  if (!rows[0]) throw new ValidationError('runId', `no address-book run ${runId}`);
  return rows[0];
}

export async function setRunPhase(db: Db, runId: string, phase: ReconcilePhase): Promise<void> {
  await db.query('update address_book_runs set phase = $2 where run_id = $1', [runId, phase]);
}

/** A run recorded earlier under this id (a retried begin), if any. */
export async function findRun(
  db: Db,
  runId: string,
): Promise<{ status: string; mode: 'full' | 'incremental'; error: string | null } | undefined> {
  const { rows } = await db.query<{ status: string; mode: 'full' | 'incremental'; error: string | null }>(
    'select status, mode, error from address_book_runs where run_id = $1',
    [runId],
  );
  return rows[0];
}

/**
 * Records a running run. The VASP's run lock is a unique index over its running runs: a second one fails with the
 * unique violation (23505), which the caller turns into a skipped run.
 */
export async function insertRun(
  db: Db,
  run: { runId: string; vaspDid: string; workflowId: string; trigger: ReconcileTrigger; mode: 'full' | 'incremental' },
): Promise<void> {
  await db.query(
    'insert into address_book_runs (run_id, vasp_did, workflow_id, trigger, mode) values ($1, $2, $3, $4, $5)',
    [run.runId, run.vaspDid, run.workflowId, run.trigger, run.mode],
  );
}

/** The run that holds the VASP's lock, if any. */
export async function runningRunOf(db: Db, vaspDid: string): Promise<string | undefined> {
  const { rows } = await db.query<{ run_id: string }>(
    `select run_id from address_book_runs where vasp_did = $1 and status = 'running'`,
    [vaspDid],
  );
  return rows[0]?.run_id;
}

/** Records a run that did not start because `error` (another run held the VASP's lock). */
export async function insertSkippedRun(
  db: Db,
  run: { runId: string; vaspDid: string; workflowId: string; trigger: ReconcileTrigger; error: string },
): Promise<void> {
  await db.query(
    `insert into address_book_runs (run_id, vasp_did, workflow_id, trigger, status, phase, finished_at, error)
     values ($1, $2, $3, $4, 'skipped', 'skipped', now(), $5) on conflict (run_id) do nothing`,
    [run.runId, run.vaspDid, run.workflowId, run.trigger, run.error],
  );
}

/**
 * Stores rejected rows (up to `maxStored` per run, with their reason) and counts all of them, in the caller's
 * transaction.
 */
export async function recordRejections(
  db: Db,
  runId: string,
  rows: readonly { action: 'add' | 'remove'; address: string; asset?: string; customerRef?: string; reason: string }[],
  maxStored: number,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into address_book_rejections (run_id, action, address, asset, customer_ref, reason)
     select $1, x, a, s, c, r from unnest($7::text[], $2::text[], $3::text[], $4::text[], $5::text[]) as t (x, a, s, c, r)
      limit greatest(0, $6 - (select count(*) from address_book_rejections where run_id = $1))
     on conflict (run_id, address) do nothing`,
    [
      runId,
      rows.map((r) => r.address),
      rows.map((r) => r.asset ?? ''),
      rows.map((r) => r.customerRef ?? ''),
      rows.map((r) => r.reason),
      maxStored,
      rows.map((r) => r.action),
    ],
  );
  await db.query('update address_book_runs set rejected = rejected + $2 where run_id = $1', [runId, rows.length]);
}

/** How far the removals (or registrations) went: a retried step resumes after `seq`. */
export async function setProgress(
  db: Db,
  runId: string,
  step: 'removed_through' | 'registered_through',
  seq: number,
): Promise<void> {
  const column = step === 'removed_through' ? 'removed_through' : 'registered_through';
  await db.query(`update address_book_runs set ${column} = $2 where run_id = $1`, [runId, seq]);
}

export async function setNetworkAfter(db: Db, runId: string, total: number): Promise<void> {
  await db.query('update address_book_runs set network_after = $2 where run_id = $1', [runId, total]);
}

/** The report a finished run stored, if it has one. */
export async function storedReport(db: Db, runId: string): Promise<ReconcileReport | undefined> {
  const { rows } = await db.query<{ report: ReconcileReport | null }>(
    'select report from address_book_runs where run_id = $1',
    [runId],
  );
  return rows[0]?.report ?? undefined;
}

/** What a run's report needs beside its row: its chunks, trigger, start, the database's clock, refusals by action. */
export async function reportFacts(
  db: Db,
  runId: string,
): Promise<{
  chunks: number;
  trigger: ReconcileTrigger;
  startedAt: Date;
  now: Date;
  rejectedAdds: number;
  rejectedRemoves: number;
}> {
  const { rows: extra } = await db.query<{ chunks: string; trigger: ReconcileTrigger; started_at: Date; now: Date }>(
    `select (select count(*) from address_book_chunks where run_id = $1) as chunks,
            trigger, started_at, clock_timestamp() as now from address_book_runs where run_id = $1`,
    [runId],
  );
  const { rows: by } = await db.query<{ adds: string; removes: string }>(
    `select count(*) filter (where action = 'add') as adds, count(*) filter (where action = 'remove') as removes
       from address_book_rejections where run_id = $1`,
    [runId],
  );
  const x = extra[0]!;
  return {
    chunks: Number(x.chunks),
    trigger: x.trigger,
    startedAt: x.started_at,
    now: x.now,
    rejectedAdds: Number(by[0]!.adds),
    rejectedRemoves: Number(by[0]!.removes),
  };
}

/** The database's clock now (the end of a run is timed by it, like its start). */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('select clock_timestamp() as now');
  return rows[0]!.now;
}

/** Ends the run: its status and report; this releases the VASP's run lock. */
export async function finishRunRecord(
  db: Db,
  runId: string,
  end: { status: 'succeeded' | 'failed'; report: ReconcileReport; error?: string; at: Date },
): Promise<void> {
  await db.query(
    `update address_book_runs set status = $2, phase = $3, finished_at = $6, report = $4, error = $5 where run_id = $1`,
    [
      runId,
      end.status,
      end.status === 'succeeded' ? 'done' : 'failed',
      JSON.stringify(end.report),
      end.error ?? null,
      end.at,
    ],
  );
}

/** The VASP's run recorded as running (it holds the run lock), with its workflow. */
export async function runningRunWithWorkflow(
  db: Db,
  vaspDid: string,
): Promise<{ run_id: string; workflow_id: string } | undefined> {
  const { rows } = await db.query<{ run_id: string; workflow_id: string }>(
    `select run_id, workflow_id from address_book_runs where vasp_did = $1 and status = 'running'`,
    [vaspDid],
  );
  return rows[0];
}

/** Closes a run recorded as running whose workflow is gone, as failed with `error`: it releases the VASP's run lock. */
export async function closeAbandonedRun(db: Db, runId: string, error: string): Promise<void> {
  await db.query(
    `update address_book_runs set status = 'failed', phase = 'failed', finished_at = now(), error = $2 where run_id = $1 and status = 'running'`,
    [runId, error],
  );
}

/** A finished (or skipped) run as stored. */
export interface FinishedRunRow {
  run_id: string;
  trigger: string;
  status: string;
  started_at: Date;
  finished_at: Date | null;
  error: string | null;
  report: ReconcileReport | null;
}

/** The VASP's finished (or skipped) runs, newest first. */
export async function finishedRuns(db: Db, vaspDid: string, limit: number): Promise<FinishedRunRow[]> {
  const { rows } = await db.query<FinishedRunRow>(
    `select run_id, trigger, status, started_at, finished_at, error, report from address_book_runs
      where vasp_did = $1 and status <> 'running' order by started_at desc limit $2`,
    [vaspDid, limit],
  );
  return rows;
}

/** A run's stored rejected rows with their reasons, at most `limit`. */
export async function runRejections(
  db: Db,
  runId: string,
  limit: number,
): Promise<{ action: string; address: string; asset: string; customer_ref: string; reason: string }[]> {
  const { rows } = await db.query<{
    action: string;
    address: string;
    asset: string;
    customer_ref: string;
    reason: string;
  }>(
    `select action, address, asset, customer_ref, reason from address_book_rejections where run_id = $1 order by action, address limit $2`,
    [runId, limit],
  );
  return rows;
}
