import type { Pool } from 'pg';
import type { CursorKey } from '../lib/listing/cursor';
import { exactTimestamp, keyset, type ListOrder } from './listing';
import type { Page } from './transfer-view';

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
  run_id: string; vasp_did: string; workflow_id: string; trigger: string; mode: string; status: string; phase: string;
  started_at: Date; finished_at: Date | null; desired: string | null; to_add: string | null; to_update: string | null;
  to_remove: string | null; rejected: string; error: string | null; cursor_at: string;
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
  const more = rows.length > page.limit;
  const shown = rows.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    rows: shown.map((r) => ({
      runId: r.run_id, vaspDid: r.vasp_did, workflowId: r.workflow_id, trigger: r.trigger, mode: r.mode, status: r.status, phase: r.phase,
      startedAt: r.started_at.toISOString(), finishedAt: r.finished_at?.toISOString() ?? null, desired: num(r.desired),
      toAdd: num(r.to_add), toUpdate: num(r.to_update), toRemove: num(r.to_remove), rejected: Number(r.rejected), error: r.error,
    })),
    ...(more && last ? { next: { at: last.cursor_at, id: last.run_id } } : {}),
  };
}
