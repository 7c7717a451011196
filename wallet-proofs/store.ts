/**
 * Wallet ownership proofs' SQL: one row per proof of (customer ref, asset, address), its challenge, its evidence and
 * its status. Status changes only leave PENDING (a finished proof is never rewritten), which makes every write of the
 * workflow's activities idempotent.
 */
import type { PoolClient } from 'pg';
import { exactTimestamp, pageByCreation, type ListOrder, type Page } from '../db/listing';
import type { Queryable } from '../db/pool';
import type { CursorKey } from '../lib/listing/cursor';
import type { ProofEvidence, ProofMethod, ProofStatus, WalletProof } from './types';

const COLUMNS = `id, customer_ref, asset, address, vasp_did, method, scheme, status, reason, nonce,
  ${exactTimestamp('challenge_expires_at')} as challenge_expires_at, deposit_address, deposit_amount, evidence,
  created_by, ${exactTimestamp('created_at')} as created_at, ${exactTimestamp('updated_at')} as updated_at,
  ${exactTimestamp('verified_at')} as verified_at, ${exactTimestamp('expires_at')} as expires_at`;

interface Row {
  id: string;
  customer_ref: string;
  asset: string;
  address: string;
  vasp_did: string;
  method: ProofMethod;
  scheme: WalletProof['scheme'];
  status: ProofStatus;
  reason: string | null;
  nonce: string;
  challenge_expires_at: string;
  deposit_address: string | null;
  deposit_amount: string | null;
  evidence: ProofEvidence;
  created_by: string;
  created_at: string;
  updated_at: string;
  verified_at: string | null;
  expires_at: string | null;
}

const toProof = (r: Row): WalletProof => ({
  id: r.id,
  customerRef: r.customer_ref,
  asset: r.asset,
  address: r.address,
  vaspDid: r.vasp_did,
  method: r.method,
  scheme: r.scheme,
  status: r.status,
  reason: r.reason,
  nonce: r.nonce,
  challengeExpiresAt: r.challenge_expires_at,
  depositAddress: r.deposit_address,
  depositAmount: r.deposit_amount,
  evidence: r.evidence,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  verifiedAt: r.verified_at,
  expiresAt: r.expires_at,
});

export type NewProof = Pick<
  WalletProof,
  | 'id'
  | 'customerRef'
  | 'asset'
  | 'address'
  | 'vaspDid'
  | 'method'
  | 'scheme'
  | 'nonce'
  | 'challengeExpiresAt'
  | 'depositAddress'
  | 'depositAmount'
  | 'createdBy'
>;

/** The unique constraints an insert can meet: the nonce, and an open deposit test's (address, amount). */
export type InsertConflict = 'nonce' | 'deposit';

/** Inserts in the caller's transaction, behind a savepoint: a conflict leaves it usable (to retry another amount). */
export async function insertProof(tx: PoolClient, p: NewProof): Promise<WalletProof | InsertConflict> {
  await tx.query('savepoint wallet_proof_insert');
  try {
    const { rows } = await tx.query<Row>(
      `insert into wallet_proofs (id, customer_ref, asset, address, vasp_did, method, scheme, status, nonce,
         challenge_expires_at, deposit_address, deposit_amount, created_by)
       values ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $8, $9, $10, $11, $12)
       returning ${COLUMNS}`,
      [
        p.id,
        p.customerRef,
        p.asset,
        p.address,
        p.vaspDid,
        p.method,
        p.scheme,
        p.nonce,
        p.challengeExpiresAt,
        p.depositAddress,
        p.depositAmount,
        p.createdBy,
      ],
    );
    await tx.query('release savepoint wallet_proof_insert');
    return toProof(rows[0]!);
  } catch (e) {
    const err = e as { code?: string; constraint?: string };
    if (err.code !== '23505') throw e;
    await tx.query('rollback to savepoint wallet_proof_insert');
    return err.constraint === 'wallet_proofs_open_deposit' ? 'deposit' : 'nonce';
  }
}

export async function getProof(db: Queryable, id: string): Promise<WalletProof | undefined> {
  const { rows } = await db.query<Row>(`select ${COLUMNS} from wallet_proofs where id = $1`, [id]);
  return rows[0] && toProof(rows[0]);
}

/** The newest VERIFIED proof of the (customer, asset, address) still valid at `now`, if any. */
export async function reusableProof(
  db: Queryable,
  subject: { customerRef: string; asset: string; address: string },
  now: Date,
): Promise<WalletProof | undefined> {
  const { rows } = await db.query<Row>(
    `select ${COLUMNS} from wallet_proofs
      where customer_ref = $1 and asset = $2 and address = $3 and status = 'VERIFIED' and expires_at > $4
      order by verified_at desc limit 1`,
    [subject.customerRef, subject.asset, subject.address, now.toISOString()],
  );
  return rows[0] && toProof(rows[0]);
}

export interface ProofFilter {
  status?: ProofStatus;
  customerRef?: string;
  address?: string;
}

/** One page of the proofs matching every filter given, by creation time (keyset pagination, db/listing.ts). */
export async function listProofs(
  db: Queryable,
  filter: ProofFilter,
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<WalletProof>> {
  return pageByCreation<Row, WalletProof>(
    db,
    { table: 'wallet_proofs', columns: COLUMNS },
    [
      ['status', filter.status],
      ['customer_ref', filter.customerRef],
      ['address', filter.address],
    ],
    page,
    toProof,
  );
}

/**
 * Moves a PENDING proof to `status`; undefined when it is not PENDING (already moved: a retried write, or a race the
 * first writer won), so the caller audits only a change it made.
 */
export async function finishProof(
  tx: PoolClient,
  change: {
    id: string;
    status: Exclude<ProofStatus, 'PENDING'>;
    reason: string | null;
    evidence?: ProofEvidence;
    validDays?: number;
  },
): Promise<WalletProof | undefined> {
  const verified = change.status === 'VERIFIED';
  const { rows } = await tx.query<Row>(
    `update wallet_proofs set status = $2, reason = $3, evidence = coalesce($4::jsonb, evidence),
        updated_at = clock_timestamp(),
        verified_at = case when $5 then clock_timestamp() end,
        expires_at = case when $5 then clock_timestamp() + make_interval(days => $6::int) end
      where id = $1 and status = 'PENDING'
      returning ${COLUMNS}`,
    [
      change.id,
      change.status,
      change.reason,
      change.evidence ? JSON.stringify(change.evidence) : null,
      verified,
      change.validDays ?? 0,
    ],
  );
  return rows[0] && toProof(rows[0]);
}

/** Records why an observed deposit did not verify a still-PENDING proof (it keeps waiting for the right one). */
export async function notePending(
  tx: PoolClient,
  id: string,
  reason: string,
  evidence: ProofEvidence,
): Promise<WalletProof | undefined> {
  const { rows } = await tx.query<Row>(
    `update wallet_proofs set reason = $2, evidence = $3::jsonb, updated_at = clock_timestamp()
      where id = $1 and status = 'PENDING' returning ${COLUMNS}`,
    [id, reason, JSON.stringify(evidence)],
  );
  return rows[0] && toProof(rows[0]);
}

/**
 * The newest VERIFIED proof of the wallet (asset, address) still valid at `now`, of `customerRef` when given, else of
 * anyone: whether an address is a proven self-hosted wallet is a fact about the wallet, whoever proved it.
 */
export async function verifiedProofOf(
  db: Queryable,
  wallet: { asset: string; address: string; customerRef?: string },
  now: Date,
): Promise<WalletProof | undefined> {
  const args: unknown[] = [wallet.asset, wallet.address, now.toISOString()];
  if (wallet.customerRef !== undefined) args.push(wallet.customerRef);
  const { rows } = await db.query<Row>(
    `select ${COLUMNS} from wallet_proofs
      where asset = $1 and address = $2 and status = 'VERIFIED' and expires_at > $3
        ${wallet.customerRef !== undefined ? 'and customer_ref = $4' : ''}
      order by verified_at desc limit 1`,
    args,
  );
  return rows[0] && toProof(rows[0]);
}

/** A workflow waiting for a proof of the wallet (idempotent: registering again changes nothing). */
export async function addProofWaiter(
  db: Queryable,
  waiter: { asset: string; address: string; workflowId: string },
): Promise<void> {
  await db.query(
    `insert into wallet_proof_waiters (asset, address, workflow_id) values ($1, $2, $3) on conflict do nothing`,
    [waiter.asset, waiter.address, waiter.workflowId],
  );
}

/** The workflows waiting for a proof of the wallet, oldest first. */
export async function proofWaiters(db: Queryable, wallet: { asset: string; address: string }): Promise<string[]> {
  const { rows } = await db.query<{ workflow_id: string }>(
    `select workflow_id from wallet_proof_waiters where asset = $1 and address = $2 order by created_at, workflow_id`,
    [wallet.asset, wallet.address],
  );
  return rows.map((r) => r.workflow_id);
}

/** Removes a waiter: it was signalled, found its proof, or stopped waiting. */
export async function removeProofWaiter(
  db: Queryable,
  waiter: { asset: string; address: string; workflowId: string },
): Promise<void> {
  await db.query(`delete from wallet_proof_waiters where asset = $1 and address = $2 and workflow_id = $3`, [
    waiter.asset,
    waiter.address,
    waiter.workflowId,
  ]);
}
