import type { Pool } from 'pg';
import type { CursorKey } from '../lib/listing/cursor';
import { exactTimestamp, keyset, pageOf, type ListOrder, type Page } from '../db/listing';

/** One key rotation as listed (db/migrations/orchestrator/0008_console.sql). */
export interface KeyRotationRow {
  workflowId: string;
  runId: string;
  vaspDid: string;
  requestedBy: string;
  reason: string;
  status: 'running' | 'completed' | 'failed';
  step: string | null;
  newKeyId: string | null;
  newDid: string | null;
  previousDid: string | null;
  error: { type: string; message: string } | null;
  startedAt: string;
  finishedAt: string | null;
}

interface Who {
  workflowId: string;
  runId: string;
  vaspDid: string;
  requestedBy: string;
  reason: string;
}

/** The rotation has created its new (pending) key; repeated calls of a retried activity change nothing. */
export async function recordRotationStarted(
  pool: Pool,
  who: Who,
  key: { keyId: string; did: string; previousDid?: string },
): Promise<void> {
  await pool.query(
    `insert into key_rotations (workflow_id, run_id, vasp_did, requested_by, reason, status, step, new_key_id, new_did, previous_did)
     values ($1, $2, $3, $4, $5, 'running', 'publishing', $6, $7, $8)
     on conflict (workflow_id, run_id) do nothing`,
    [who.workflowId, who.runId, who.vaspDid, who.requestedBy, who.reason, key.keyId, key.did, key.previousDid ?? null],
  );
}

/** The rotation ended: its key is active (`completed`) or it failed at `step` (the row is created if it had none). */
export async function recordRotationFinished(
  pool: Pool,
  who: Who,
  outcome: { status: 'completed' } | { status: 'failed'; step: string; error: { type: string; message: string } },
): Promise<void> {
  const step = outcome.status === 'completed' ? 'completed' : outcome.step;
  const error = outcome.status === 'failed' ? JSON.stringify(outcome.error) : null;
  await pool.query(
    `insert into key_rotations (workflow_id, run_id, vasp_did, requested_by, reason, status, step, error, finished_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, now())
     on conflict (workflow_id, run_id) do update set status = excluded.status, step = excluded.step, error = excluded.error,
       finished_at = coalesce(key_rotations.finished_at, excluded.finished_at)`,
    [who.workflowId, who.runId, who.vaspDid, who.requestedBy, who.reason, outcome.status, step, error],
  );
}

interface Raw {
  workflow_id: string;
  run_id: string;
  vasp_did: string;
  requested_by: string;
  reason: string;
  status: KeyRotationRow['status'];
  step: string | null;
  new_key_id: string | null;
  new_did: string | null;
  previous_did: string | null;
  error: KeyRotationRow['error'];
  started_at: Date;
  finished_at: Date | null;
  cursor_at: string;
  cursor_id: string;
}

export async function listKeyRotations(
  pool: Pool,
  filter: { vaspDid?: string; status?: string },
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<KeyRotationRow>> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.vaspDid) {
    params.push(filter.vaspDid);
    where.push(`vasp_did = $${params.length}`);
  }
  if (filter.status) {
    params.push(filter.status);
    where.push(`status = $${params.length}`);
  }
  // workflow_id and run_id as one key: a workflow id can run many times.
  const id = `(workflow_id || '/' || run_id)`;
  const ks = keyset(params, 'started_at', id, page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  params.push(page.limit + 1);
  const { rows } = await pool.query<Raw>(
    `select *, ${exactTimestamp('started_at')} as cursor_at, ${id} as cursor_id from key_rotations
     ${where.length ? `where ${where.join(' and ')}` : ''} ${ks.orderBy} limit $${params.length}`,
    params,
  );
  return pageOf(
    rows,
    page.limit,
    (r) => ({ at: r.cursor_at, id: r.cursor_id }),
    (r) => ({
      workflowId: r.workflow_id,
      runId: r.run_id,
      vaspDid: r.vasp_did,
      requestedBy: r.requested_by,
      reason: r.reason,
      status: r.status,
      step: r.step,
      newKeyId: r.new_key_id,
      newDid: r.new_did,
      previousDid: r.previous_did,
      error: r.error,
      startedAt: r.started_at.toISOString(),
      finishedAt: r.finished_at?.toISOString() ?? null,
    }),
  );
}
