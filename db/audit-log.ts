import type { Pool, PoolClient } from 'pg';
import type { CursorKey } from '../lib/listing/cursor';
import { exactTimestamp, keyset, type ListOrder } from './listing';
import type { Page } from './transfer-view';

/** One row of the audit log as the console searches and exports it. */
export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  subject: string;
  details: unknown;
}

export interface AuditFilter {
  actor?: string;
  /** An action, or a prefix of one ending in a dot (`incoming.` for every incoming decision and routing). */
  action?: string;
  subject?: string;
  from?: Date;
  to?: Date;
}

/** The audit log, searched by actor, action, subject and time, newest (or oldest) first by time then id. */
export async function listAuditLog(pool: Pool, filter: AuditFilter, page: { limit: number; order: ListOrder; cursor?: CursorKey }): Promise<Page<AuditRow>> {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.actor) add((p) => `actor = ${p}`, filter.actor);
  if (filter.action?.endsWith('.')) add((p) => `starts_with(action, ${p})`, filter.action);
  else if (filter.action) add((p) => `action = ${p}`, filter.action);
  if (filter.subject) add((p) => `subject = ${p}`, filter.subject);
  if (filter.from) add((p) => `at >= ${p}`, filter.from);
  if (filter.to) add((p) => `at < ${p}`, filter.to);
  const ks = keyset(params, 'at', 'id::text', page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  params.push(page.limit + 1);
  const { rows } = await pool.query<{ id: string; at: Date; actor: string; action: string; subject: string; details: unknown; cursor_at: string }>(
    `select id::text as id, at, actor, action, subject, details, ${exactTimestamp('at')} as cursor_at from audit_log
      ${where.length ? `where ${where.join(' and ')}` : ''} ${ks.orderBy} limit $${params.length}`,
    params,
  );
  const more = rows.length > page.limit;
  const shown = rows.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    rows: shown.map((r) => ({ id: r.id, at: r.at.toISOString(), actor: r.actor, action: r.action, subject: r.subject, details: r.details })),
    ...(more && last ? { next: { at: last.cursor_at, id: last.id } } : {}),
  };
}

/** One entry of the audit log: who did what to which subject, and the details (no personal data). */
export interface AuditEntry {
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

/** Appends an entry to the audit log (inside the caller's transaction when given a client). */
export async function insertAuditEntry(db: Pick<Pool | PoolClient, 'query'>, entry: AuditEntry): Promise<void> {
  await db.query('insert into audit_log (actor, action, subject, details) values ($1, $2, $3, $4)', [
    entry.actor, entry.action, entry.subject, JSON.stringify(entry.details),
  ]);
}
