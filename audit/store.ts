import { metrics } from '../lib/metrics/registry';
import type { Pool, PoolClient } from 'pg';
import type { CursorKey } from '../lib/listing/cursor';
import { exactTimestamp, keyset, pageOf, type ListOrder, type Page } from '../db/listing';
import { withTransaction } from '../db/transaction';
import { auditRowHash, chainOf, GENESIS_HASH, type AuditChainRow, type ChainHead } from './chain';
import { auditActor, principalIn } from '../lib/principal';

/** One row of the audit log as the console searches and exports it. */
export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  /** For display: the name of the principal in the details when there is one (a person can change it; actor is stable). */
  actorName: string | null;
  action: string;
  subject: string;
  details: unknown;
  /** The row's place in its hash chain (audit/chain.ts). */
  chain: string;
  seq: number;
  prevHash: string;
  hash: string;
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
export async function listAuditLog(
  pool: Pool,
  filter: AuditFilter,
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<AuditRow>> {
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
  const { rows } = await pool.query<{
    id: string;
    at: Date;
    actor: string;
    actor_name: string | null;
    action: string;
    subject: string;
    details: unknown;
    chain: string;
    seq: string;
    prev_hash: string;
    hash: string;
    cursor_at: string;
  }>(
    `select id::text as id, at, actor, details->'principal'->>'name' as actor_name, action, subject, details, chain, seq, prev_hash, hash,
            ${exactTimestamp('at')} as cursor_at from audit_log
      ${where.length ? `where ${where.join(' and ')}` : ''} ${ks.orderBy} limit $${params.length}`,
    params,
  );
  return pageOf(
    rows,
    page.limit,
    (r) => ({ at: r.cursor_at, id: r.id }),
    (r) => ({
      id: r.id,
      at: r.at.toISOString(),
      actor: r.actor,
      actorName: r.actor_name,
      action: r.action,
      subject: r.subject,
      details: r.details,
      chain: r.chain,
      seq: Number(r.seq),
      prevHash: r.prev_hash,
      hash: r.hash,
    }),
  );
}

/** One entry of the audit log: who did what to which subject, and the details (no personal data). */
export interface AuditEntry {
  /**
   * Who: a principal's stable id (lib/principal.ts auditActor), or a component's own name. When the details carry the
   * principal, the row's actor is that principal's stable id whatever is given here.
   */
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

export interface AppendOptions {
  /**
   * Names the write (an activity's workflow run and activity id): an append whose key is already in the log returns
   * that row instead, so a retried activity neither duplicates nor forks the chain.
   */
  idempotencyKey?: string;
}

const CHAIN_COLUMNS = `id::text as id, chain, seq, ${exactTimestamp('at')} as at, actor, action, subject, details, prev_hash, hash`;

interface ChainRowRecord {
  id: string;
  chain: string;
  seq: string;
  at: string;
  actor: string;
  action: string;
  subject: string;
  details: unknown;
  prev_hash: string;
  hash: string;
}
const toChainRow = (r: ChainRowRecord): AuditChainRow => ({
  id: r.id,
  chain: r.chain,
  seq: Number(r.seq),
  at: r.at,
  actor: r.actor,
  action: r.action,
  subject: r.subject,
  details: r.details,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/**
 * Appends an entry to its chain inside the caller's transaction (`tx` must be in one: the chain's head stays locked
 * until it commits, which serialises appends to the chain across processes; append last, so the lock is held briefly).
 * The row commits or rolls back with the change it records.
 */
export async function appendAuditEntry(
  tx: PoolClient,
  entry: AuditEntry,
  opts: AppendOptions = {},
): Promise<AuditChainRow> {
  try {
    return await appendToChain(tx, entry, opts);
  } catch (e) {
    metrics.auditAppendFailures.inc();
    throw e;
  }
}

async function appendToChain(tx: PoolClient, entry: AuditEntry, opts: AppendOptions): Promise<AuditChainRow> {
  const chain = chainOf(entry.action);
  // The principal decides the actor: a caller (or a workflow's input written before actors were stable ids) that
  // passed a display name cannot make a row read as someone else or as a system component.
  const principal = principalIn(entry.details.principal);
  const actor = principal ? auditActor(principal) : entry.actor;
  // Locks the chain's head and reads it, with the row's time taken once the lock is held (so times follow seq).
  const lockHead = () =>
    tx.query<{ seq: string; hash: string; at: string }>(
      `update audit_chain_heads set updated_at = clock_timestamp() where chain = $1 returning seq, hash, ${exactTimestamp('updated_at')} as at`,
      [chain],
    );
  let head = await lockHead();
  if (!head.rows[0]) {
    await tx.query(
      'insert into audit_chain_heads (chain, seq, hash) values ($1, 0, $2) on conflict (chain) do nothing',
      [chain, GENESIS_HASH],
    );
    head = await lockHead();
  }
  const { seq, hash: prevHash, at } = head.rows[0]!;
  // The details as the database will give them back (JSON, no undefined), so the hash verifies on reading.
  const details = JSON.parse(JSON.stringify(entry.details)) as unknown;
  const fields = {
    chain,
    seq: Number(seq) + 1,
    at,
    actor,
    action: entry.action,
    subject: entry.subject,
    details,
    prevHash,
  };
  const hash = auditRowHash(fields);
  // One statement: the row, and the head moved only if the row went in (an idempotency key already there keeps both).
  const { rows } = await tx.query<{ id: string }>(
    `with ins as (
       insert into audit_log (chain, seq, at, actor, action, subject, details, prev_hash, hash, idempotency_key)
       values ($1, $2, $3::timestamptz, $4, $5, $6, $7, $8, $9, $10)
       on conflict (idempotency_key) where idempotency_key is not null do nothing
       returning id
     ), moved as (update audit_chain_heads set seq = $2, hash = $9 where chain = $1 and exists (select 1 from ins))
     select id::text as id from ins`,
    [
      chain,
      fields.seq,
      fields.at,
      actor,
      entry.action,
      entry.subject,
      JSON.stringify(details),
      fields.prevHash,
      hash,
      opts.idempotencyKey ?? null,
    ],
  );
  if (rows[0]) return { id: rows[0].id, ...fields, hash };
  // A retry: the row its earlier attempt wrote (committed before this append got the lock).
  const existing = await tx.query<ChainRowRecord>(`select ${CHAIN_COLUMNS} from audit_log where idempotency_key = $1`, [
    opts.idempotencyKey,
  ]);
  return toChainRow(existing.rows[0]!);
}

/** Appends an entry in a transaction of its own, for records of something that changed no row of ours. */
export async function recordAuditEntry(
  pool: Pool,
  entry: AuditEntry,
  opts: AppendOptions = {},
): Promise<AuditChainRow> {
  return withTransaction(pool, (tx) => appendAuditEntry(tx, entry, opts));
}

/** Every chain's recorded head. */
export async function auditChainHeads(db: Pick<Pool | PoolClient, 'query'>): Promise<ChainHead[]> {
  const { rows } = await db.query<{ chain: string; seq: string; hash: string }>(
    'select chain, seq, hash from audit_chain_heads order by chain',
  );
  return rows.map((r) => ({ chain: r.chain, seq: Number(r.seq), hash: r.hash }));
}

/**
 * The chained rows, chain by chain in seq order, read in batches (the log may hold millions), optionally only those
 * whose time is in [from, to). Give a client in a REPEATABLE READ transaction for one consistent view.
 */
export async function* readAuditChain(
  db: Pick<Pool | PoolClient, 'query'>,
  range: { from?: Date; to?: Date } = {},
  batch = 5000,
): AsyncGenerator<AuditChainRow> {
  let after: { chain: string; seq: string } | undefined;
  for (;;) {
    const params: unknown[] = [range.from ?? null, range.to ?? null, batch];
    const { rows } = await db.query<ChainRowRecord>(
      `select ${CHAIN_COLUMNS} from audit_log
        where ($1::timestamptz is null or at >= $1) and ($2::timestamptz is null or at < $2)
          ${after ? 'and (chain, seq) > ($4, $5::bigint)' : ''}
        order by chain, seq limit $3`,
      after ? [...params, after.chain, after.seq] : params,
    );
    for (const r of rows) yield toChainRow(r);
    if (rows.length < batch) return;
    const last = rows[rows.length - 1]!;
    after = { chain: last.chain, seq: last.seq };
  }
}
