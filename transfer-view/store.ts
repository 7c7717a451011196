import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import { msToNumber } from '@temporalio/common/lib/time';
import type { CursorKey } from '../lib/listing/cursor';
import type { TransferViewUpdate } from './types';
import { exactTimestamp, keyset, pageOf, type ListOrder, type Page } from '../db/listing';
import { metrics } from '../lib/metrics/registry';

/** The network's statuses that answer a transfer (docs: the KPIs' response rate): the first one sets `answered_at`. */
export const ANSWER_STATUSES = ['ACK', 'ACCEPTED', 'DECLINED', 'REJECTED', 'NOT_READY'];

/** One transfer as the console lists it (db/migrations/orchestrator/0008_console.sql): metadata only. */
export interface TransferViewRow {
  workflowId: string;
  direction: 'incoming' | 'outgoing';
  id: string;
  transactionId: string | null;
  reference: string | null;
  status: string;
  phase: string | null;
  final: boolean;
  needsReview: boolean;
  needsRouting: boolean;
  escalated: boolean;
  subsidiaryDid: string | null;
  counterpartyDid: string | null;
  asset: string | null;
  amount: string | null;
  hits: unknown;
  decision: unknown;
  /** Who decided: `system` (the policy or screening, no person) or `person`; null until decided. */
  decidedBy?: 'system' | 'person' | null;
  decisionAction?: string | null;
  deadlineAt: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export type TransferViewWrite = Omit<TransferViewRow, 'updatedAt' | 'deadlineAt' | 'createdAt'> & {
  deadlineAt: Date | null;
  createdAt: Date;
};

interface WriteEffect {
  prev_status: string | null;
  prev_decided_by: string | null;
  status: string;
  decided_by: string | null;
  decision_action: string | null;
  newly_answered: boolean;
  answer_seconds: number | null;
}

const COLUMNS = [
  'workflow_id',
  'direction',
  'id',
  'transaction_id',
  'reference',
  'status',
  'phase',
  'final',
  'needs_review',
  'needs_routing',
  'escalated',
  'subsidiary_did',
  'counterparty_did',
  'asset',
  'amount',
  'hits',
  'decision',
  'decided_by',
  'decision_action',
  'deadline_at',
  'created_at',
  'version',
] as const;

/**
 * Writes a transfer's row. A write carrying an older version than the stored one changes nothing, so a retried or late
 * write never takes a transfer back; `created_at` stays what the first write said.
 */
export async function writeTransferView(pool: Pool, row: TransferViewWrite): Promise<void> {
  const values: unknown[] = [
    row.workflowId,
    row.direction,
    row.id,
    row.transactionId,
    row.reference,
    row.status,
    row.phase,
    row.final,
    row.needsReview,
    row.needsRouting,
    row.escalated,
    row.subsidiaryDid,
    row.counterpartyDid,
    row.asset,
    row.amount,
    row.hits === null || row.hits === undefined ? null : JSON.stringify(row.hits),
    row.decision === null || row.decision === undefined ? null : JSON.stringify(row.decision),
    row.decidedBy ?? null,
    row.decisionAction ?? null,
    row.deadlineAt,
    row.createdAt,
    row.version,
  ];
  const updates = COLUMNS.filter((c) => c !== 'workflow_id' && c !== 'created_at').map((c) => `${c} = excluded.${c}`);
  values.push(ANSWER_STATUSES);
  // `prev` is the row before this statement: what changed feeds the metrics, so a repeated write counts nothing.
  const { rows } = await pool.query<WriteEffect>(
    `with prev as (select status, decided_by, answered_at from transfer_view where workflow_id = $1)
     insert into transfer_view (${COLUMNS.join(', ')}, answered_at)
     values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')},
             case when $6::text = any($${values.length}::text[]) then now() end)
     on conflict (workflow_id) do update set ${updates.join(', ')},
       answered_at = coalesce(transfer_view.answered_at, excluded.answered_at), updated_at = now()
     where transfer_view.version <= excluded.version
     returning (select status from prev) as prev_status, (select decided_by from prev) as prev_decided_by, status,
       decided_by, decision_action,
       answered_at is not null and (select answered_at from prev) is null as newly_answered,
       extract(epoch from answered_at - created_at)::float8 as answer_seconds`,
    values,
  );
  if (rows[0]) countWrite(row, rows[0]);
}

/** The metrics of one effective write: the status entered, the decision taken without a person, the first answer. */
function countWrite(row: TransferViewWrite, e: WriteEffect): void {
  const subsidiary = row.subsidiaryDid ?? 'none';
  if (e.prev_status !== e.status) {
    metrics.transfers.inc({ direction: row.direction, subsidiary, status: e.status });
  }
  if (e.decided_by === 'system' && e.prev_decided_by !== 'system') {
    metrics.automaticDecisions.inc({ direction: row.direction, action: e.decision_action ?? 'unknown' });
  }
  if (e.newly_answered && row.direction === 'outgoing' && e.answer_seconds !== null) {
    metrics.counterpartyAnswerSeconds.observe({ subsidiary }, Math.max(0, e.answer_seconds));
  }
}

/** The review queue as the metrics show it at a scrape: the partial index on needs_review keeps it cheap. */
export async function reviewQueueSnapshot(
  pool: Pool,
): Promise<{ length: number; oldestAgeSeconds: number; overdue: number }> {
  const { rows } = await pool.query<{ length: number; oldest: number | null; overdue: number }>(
    `select count(*)::int as length, extract(epoch from now() - min(created_at))::float8 as oldest,
       count(*) filter (where deadline_at < now())::int as overdue
     from transfer_view where needs_review`,
  );
  return { length: rows[0]!.length, oldestAgeSeconds: rows[0]!.oldest ?? 0, overdue: rows[0]!.overdue };
}

/** A workflow's update (transfer-view/types.ts) as a row: the deadline becomes a time. */
export async function writeTransferViewUpdate(pool: Pool, u: TransferViewUpdate): Promise<void> {
  await writeTransferView(pool, {
    workflowId: u.workflowId,
    direction: u.direction,
    id: u.id,
    transactionId: u.transactionId ?? null,
    reference: u.reference ?? null,
    status: u.status,
    phase: u.phase ?? null,
    final: u.final,
    needsReview: u.needsReview,
    needsRouting: u.needsRouting,
    escalated: u.escalated,
    subsidiaryDid: u.subsidiaryDid ?? null,
    counterpartyDid: u.counterpartyDid ?? null,
    asset: u.asset ?? null,
    amount: u.amount ?? null,
    hits: u.hits ?? null,
    decision: u.decision ?? null,
    decidedBy: u.decidedBy ?? null,
    decisionAction: u.decisionAction ?? null,
    deadlineAt: u.deadline ? new Date(Date.parse(u.deadline.from) + msToNumber(u.deadline.after)) : null,
    createdAt: new Date(u.createdAt),
    version: u.version,
  });
}

/**
 * For a step that goes on without its list entry (the send step, a transfer's last step): false, logged, when the
 * write failed, so the workflow writes the entry again on its own.
 */
export async function writeTransferViewOrLog(pool: Pool, logger: Logger, u: TransferViewUpdate): Promise<boolean> {
  try {
    await writeTransferViewUpdate(pool, u);
    return true;
  } catch (e) {
    logger.warn({ id: u.id, error: (e as Error).message }, 'the console transfer list could not be updated');
    return false;
  }
}

export interface TransferViewFilter {
  direction?: 'incoming' | 'outgoing';
  statuses?: string[];
  needs?: 'review' | 'routing' | 'either';
  subsidiaryDid?: string;
  counterpartyDid?: string;
  asset?: string;
  createdFrom?: Date;
  createdTo?: Date;
  /** Lower-case text found in the transaction id, the reference or the transfer id. */
  text?: string;
  workflowIds?: string[];
}

/** Rows of the list's order a free-text search reads before it asks the trigram index (see listTransferViews). */
export const TEXT_WINDOW = 5_000;

const SELECT = `select workflow_id, direction, id, transaction_id, reference, status, phase, final, needs_review, needs_routing,
  escalated, subsidiary_did, counterparty_did, asset, amount, hits, decision, deadline_at, created_at, updated_at, version,
  ${exactTimestamp('created_at')} as cursor_at from transfer_view`;

interface Raw {
  workflow_id: string;
  direction: 'incoming' | 'outgoing';
  id: string;
  transaction_id: string | null;
  reference: string | null;
  status: string;
  phase: string | null;
  final: boolean;
  needs_review: boolean;
  needs_routing: boolean;
  escalated: boolean;
  subsidiary_did: string | null;
  counterparty_did: string | null;
  asset: string | null;
  amount: string | null;
  hits: unknown;
  decision: unknown;
  deadline_at: Date | null;
  created_at: Date;
  updated_at: Date;
  version: number;
  cursor_at: string;
}

const toRow = (r: Raw): TransferViewRow => ({
  workflowId: r.workflow_id,
  direction: r.direction,
  id: r.id,
  transactionId: r.transaction_id,
  reference: r.reference,
  status: r.status,
  phase: r.phase,
  final: r.final,
  needsReview: r.needs_review,
  needsRouting: r.needs_routing,
  escalated: r.escalated,
  subsidiaryDid: r.subsidiary_did,
  counterpartyDid: r.counterparty_did,
  asset: r.asset,
  amount: r.amount,
  hits: r.hits,
  decision: r.decision,
  deadlineAt: r.deadline_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  version: r.version,
});

/** One page of transfers matching `filter`, ordered by creation time then workflow id. */
export async function listTransferViews(
  pool: Pool,
  filter: TransferViewFilter,
  page: { limit: number; order: ListOrder; cursor?: CursorKey; textWindow?: number },
): Promise<Page<TransferViewRow>> {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.direction) add((p) => `direction = ${p}`, filter.direction);
  if (filter.statuses?.length === 1) add((p) => `status = ${p}`, filter.statuses[0]);
  else if (filter.statuses?.length) add((p) => `status = any(${p}::text[])`, filter.statuses);
  if (filter.needs === 'review') where.push('needs_review');
  else if (filter.needs === 'routing') where.push('needs_routing');
  else if (filter.needs === 'either') where.push('(needs_review or needs_routing)');
  if (filter.subsidiaryDid) add((p) => `subsidiary_did = ${p}`, filter.subsidiaryDid);
  if (filter.counterpartyDid) add((p) => `counterparty_did = ${p}`, filter.counterpartyDid);
  if (filter.asset) add((p) => `asset = ${p}`, filter.asset);
  if (filter.createdFrom) add((p) => `created_at >= ${p}`, filter.createdFrom);
  if (filter.createdTo) add((p) => `created_at < ${p}`, filter.createdTo);
  if (filter.workflowIds) add((p) => `workflow_id = any(${p}::text[])`, filter.workflowIds);
  const ks = keyset(params, 'created_at', 'workflow_id', page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  const structured = where.length ? `where ${where.join(' and ')}` : '';
  let rows: Raw[];
  if (filter.text) {
    params.push(`%${filter.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, page.limit + 1);
    const [text, limit] = [`$${params.length - 1}`, `$${params.length}`];
    // Each field has its trigram index (orchestrator migration 0012); the OR becomes a union of the two.
    const matches = `(lower(transaction_id) like ${text} or lower(reference) like ${text})`;
    // A term that matches a large share ("ref") would make the trigram index return most of the table, to be sorted
    // for one page. So first walk the list's own order through a bounded window: if the window holds a full page of
    // matches, they are the first matches overall. A rarer term falls through to the trigram index, which is fast
    // when the matches are fewer.
    ({ rows } = await pool.query<Raw>(
      `with recent as (select * from transfer_view ${structured} ${ks.orderBy} limit ${Math.trunc(page.textWindow ?? TEXT_WINDOW)})
       ${SELECT.replace('from transfer_view', 'from recent')} where ${matches} ${ks.orderBy} limit ${limit}`,
      params,
    ));
    if (rows.length <= page.limit) {
      // Materialized (keys only) so that the matches come from the trigram index and only they are sorted: left to itself, the
      // planner walks the time index expecting matches spread evenly in time, and reads most of the table when they
      // are not (a reference prefix is one stretch of time).
      ({ rows } = await pool.query<Raw>(
        `with found as materialized (select workflow_id, created_at from transfer_view ${structured ? `${structured} and` : 'where'} ${matches}),
              page as (select workflow_id from found ${ks.orderBy} limit ${limit})
         ${SELECT} where workflow_id in (select workflow_id from page) ${ks.orderBy} limit ${limit}`,
        params,
      ));
    }
  } else {
    params.push(page.limit + 1);
    ({ rows } = await pool.query<Raw>(`${SELECT} ${structured} ${ks.orderBy} limit $${params.length}`, params));
  }
  return pageOf(rows, page.limit, (r) => ({ at: r.cursor_at, id: r.workflow_id }), toRow);
}

export async function getTransferView(pool: Pool, workflowId: string): Promise<TransferViewRow | undefined> {
  const { rows } = await pool.query<Raw>(`${SELECT} where workflow_id = $1`, [workflowId]);
  return rows[0] ? toRow(rows[0]) : undefined;
}
