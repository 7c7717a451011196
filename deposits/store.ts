/**
 * Deposits' SQL: one row per reported on-chain output, its match at the network and its status. A row leaves HELD or
 * AWAITING_DATA once, for RELEASED or RETURN_REQUIRED, and is never rewritten after: every write of the workflow's
 * activities is idempotent.
 */
import type { PoolClient } from 'pg';
import { exactTimestamp, pageByCreation, type ListOrder, type Page } from '../db/listing';
import type { Queryable } from '../db/pool';
import type { CursorKey } from '../lib/listing/cursor';
import { isFinalDepositStatus } from './status';
import type { Deposit, DepositClassification, DepositMatch, DepositStatus } from './types';

const COLUMNS = `id, vasp_did, chain, asset, tx_hash, output_index, to_address, from_address, customer_ref, proof_required,
  amount, status, reason, classification, transaction_id, network_status, ${exactTimestamp('data_deadline_at')} as data_deadline_at, created_by,
  ${exactTimestamp('created_at')} as created_at, ${exactTimestamp('updated_at')} as updated_at,
  ${exactTimestamp('decided_at')} as decided_at, decided_by, return_tx_hash,
  ${exactTimestamp('returned_at')} as returned_at, ${exactTimestamp('escalated_at')} as escalated_at`;

interface Row {
  id: string;
  vasp_did: string;
  chain: string;
  asset: string;
  tx_hash: string;
  output_index: number;
  to_address: string;
  from_address: string | null;
  customer_ref: string | null;
  proof_required: boolean;
  amount: string;
  status: DepositStatus;
  reason: string | null;
  classification: DepositClassification;
  transaction_id: string | null;
  network_status: string | null;
  data_deadline_at: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  decided_at: string | null;
  decided_by: string | null;
  return_tx_hash: string | null;
  returned_at: string | null;
  escalated_at: string | null;
}

const toDeposit = (r: Row): Deposit => ({
  id: r.id,
  vaspDid: r.vasp_did,
  chain: r.chain,
  asset: r.asset,
  txHash: r.tx_hash,
  outputIndex: r.output_index,
  to: r.to_address,
  from: r.from_address,
  customerRef: r.customer_ref,
  proofRequired: r.proof_required,
  amount: r.amount,
  status: r.status,
  reason: r.reason,
  classification: r.classification,
  transactionId: r.transaction_id,
  networkStatus: r.network_status,
  dataDeadlineAt: r.data_deadline_at,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  decidedAt: r.decided_at,
  decidedBy: r.decided_by,
  returnTxHash: r.return_tx_hash,
  returnedAt: r.returned_at,
  escalatedAt: r.escalated_at,
});

export type NewDeposit = Pick<
  Deposit,
  | 'id'
  | 'vaspDid'
  | 'chain'
  | 'asset'
  | 'txHash'
  | 'outputIndex'
  | 'to'
  | 'from'
  | 'customerRef'
  | 'proofRequired'
  | 'amount'
  | 'classification'
  | 'dataDeadlineAt'
  | 'createdBy'
>;

/**
 * Inserts the deposit in HELD, or answers the row already stored for the same (chain, txHash, output index) with
 * `created: false`: a report repeated, or two racing, give one row.
 */
export async function insertDeposit(tx: PoolClient, d: NewDeposit): Promise<{ deposit: Deposit; created: boolean }> {
  const { rows } = await tx.query<Row>(
    `insert into deposits (id, vasp_did, chain, asset, tx_hash, output_index, to_address, from_address, amount, status,
       classification, data_deadline_at, created_by, customer_ref, proof_required)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'HELD', $10, $11, $12, $13, $14)
     on conflict (chain, tx_hash, output_index) do nothing
     returning ${COLUMNS}`,
    [
      d.id,
      d.vaspDid,
      d.chain,
      d.asset,
      d.txHash,
      d.outputIndex,
      d.to,
      d.from,
      d.amount,
      d.classification,
      d.dataDeadlineAt,
      d.createdBy,
      d.customerRef,
      d.proofRequired,
    ],
  );
  if (rows[0]) return { deposit: toDeposit(rows[0]), created: true };
  const existing = await depositOnChain(tx, d);
  if (!existing) throw new Error('a deposit conflicted on insert but cannot be read');
  return { deposit: existing, created: false };
}

export async function depositOnChain(
  db: Queryable,
  key: { chain: string; txHash: string; outputIndex: number },
): Promise<Deposit | undefined> {
  const { rows } = await db.query<Row>(
    `select ${COLUMNS} from deposits where chain = $1 and tx_hash = $2 and output_index = $3`,
    [key.chain, key.txHash, key.outputIndex],
  );
  return rows[0] && toDeposit(rows[0]);
}

/** The deposits still waiting on the network's message `transactionId` (its final status decides them). */
export async function waitingDepositsOf(db: Queryable, transactionId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from deposits where transaction_id = $1 and status in ('HELD', 'AWAITING_DATA')`,
    [transactionId],
  );
  return rows.map((r) => r.id);
}

export async function getDeposit(db: Queryable, id: string): Promise<Deposit | undefined> {
  const { rows } = await db.query<Row>(`select ${COLUMNS} from deposits where id = $1`, [id]);
  return rows[0] && toDeposit(rows[0]);
}

export interface DepositFilter {
  status?: DepositStatus;
  vaspDid?: string;
}

/** One page of the deposits matching every filter given, by creation time (keyset pagination, db/listing.ts). */
export async function listDeposits(
  db: Queryable,
  filter: DepositFilter,
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<Deposit>> {
  return pageByCreation<Row, Deposit>(
    db,
    { table: 'deposits', columns: COLUMNS },
    [
      ['status', filter.status],
      ['vasp_did', filter.vaspDid],
    ],
    page,
    toDeposit,
  );
}

/**
 * Writes the deposit's status, match and reason, locked, when one changes and the deposit is not final yet. Answers the
 * row before and after, or undefined when nothing changed (a retried write, or a final deposit), so the caller audits
 * only a change it made.
 */
export async function changeDeposit(
  tx: PoolClient,
  change: {
    id: string;
    status: DepositStatus;
    reason: string | null;
    match?: DepositMatch;
    dataDeadlineAt?: string;
    actor: string;
  },
): Promise<{ before: Deposit; after: Deposit } | undefined> {
  const { rows: current } = await tx.query<Row>(`select ${COLUMNS} from deposits where id = $1 for update`, [
    change.id,
  ]);
  const before = current[0] && toDeposit(current[0]);
  if (!before || isFinalDepositStatus(before.status)) return undefined;
  const transactionId = change.match?.transactionId ?? before.transactionId;
  const networkStatus = change.match?.networkStatus ?? before.networkStatus;
  if (
    before.status === change.status &&
    before.transactionId === transactionId &&
    before.networkStatus === networkStatus &&
    (change.reason === null || change.reason === before.reason) &&
    (change.dataDeadlineAt === undefined || Date.parse(change.dataDeadlineAt) === Date.parse(before.dataDeadlineAt))
  )
    return undefined;
  const final = isFinalDepositStatus(change.status);
  const { rows } = await tx.query<Row>(
    `update deposits set status = $2, reason = coalesce($3, reason), transaction_id = $4, network_status = $5,
        updated_at = clock_timestamp(), decided_at = case when $6 then clock_timestamp() end,
        decided_by = case when $6 then $7 end, data_deadline_at = coalesce($8::timestamptz, data_deadline_at)
      where id = $1 returning ${COLUMNS}`,
    [
      change.id,
      change.status,
      change.reason,
      transactionId,
      networkStatus,
      final,
      change.actor,
      change.dataDeadlineAt ?? null,
    ],
  );
  return { before, after: toDeposit(rows[0]!) };
}

/**
 * RETURN_REQUIRED becomes RETURNED with the return's transaction, locked. Answers the row before and, when it was
 * RETURN_REQUIRED, after; the caller refuses any other status.
 */
export async function markReturned(
  tx: PoolClient,
  id: string,
  txHash: string,
): Promise<{ before?: Deposit; after?: Deposit }> {
  const { rows: current } = await tx.query<Row>(`select ${COLUMNS} from deposits where id = $1 for update`, [id]);
  const before = current[0] && toDeposit(current[0]);
  if (!before || before.status !== 'RETURN_REQUIRED') return { before };
  const { rows } = await tx.query<Row>(
    `update deposits set status = 'RETURNED', return_tx_hash = $2, returned_at = clock_timestamp(),
        updated_at = clock_timestamp()
      where id = $1 returning ${COLUMNS}`,
    [id, txHash],
  );
  return { before, after: toDeposit(rows[0]!) };
}

/** Marks a return still unconfirmed as escalated, once; undefined when it was confirmed or escalated already. */
export async function markEscalated(tx: PoolClient, id: string): Promise<Deposit | undefined> {
  const { rows } = await tx.query<Row>(
    `update deposits set escalated_at = clock_timestamp(), updated_at = clock_timestamp()
      where id = $1 and status = 'RETURN_REQUIRED' and escalated_at is null returning ${COLUMNS}`,
    [id],
  );
  return rows[0] && toDeposit(rows[0]);
}
