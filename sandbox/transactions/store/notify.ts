/**
 * The SQL of tx/notify's matching (notify.ts): the lock that serialises everything that may match one deposit, the
 * lookups by txHash and by destination, amount and asset, and the row an INCOMPLETE message becomes when its originator
 * completes it.
 */
import type { PoolClient } from 'pg';
import type { Transaction } from '../model';
import type { TransactionRow } from './index';

const INFO = `body -> 'transactionBlockchainInfo'`;
/** A message another one superseded (notify.ts supersedeIncomplete) matches nothing any more. */
const NOT_SUPERSEDED = `not (body -> 'actions' @> '[{"action": "supersede"}]')`;

/**
 * Serialises, until the database transaction ends, every change that may match a deposit to `destinations`: notify,
 * a create that may complete an INCOMPLETE message, an update that adds a txHash. Without it two concurrent reports of
 * one deposit (or a report and the originator's create) would each find nothing and store two messages. Taken before
 * any row lock, in a stable order.
 */
export async function lockDestinations(client: PoolClient, destinations: readonly string[]): Promise<void> {
  for (const d of [...new Set(destinations)].sort()) {
    await client.query(`select pg_advisory_xact_lock(hashtextextended('tx-destination:' || $1, 0))`, [d]);
  }
}

/** Hex hashes are compared in any case (wallets print them either way); any other spelling exactly. */
export const isHexHash = (hash: string): boolean => /^(0x)?[0-9a-fA-F]+$/.test(hash);

export interface HashMatch {
  beneficiary: string;
  txHash: string;
  destination: string;
  /** '' when the caller gave none; otherwise a message with another origin does not match. */
  origin: string;
  /** Leave this message out (the one being updated). */
  excludeId?: string;
  /** Only messages in this status. */
  status?: string;
}

/**
 * The beneficiary's message for this txHash and destination (and origin, when both sides have one), locked: a completed
 * message before an INCOMPLETE one, then the oldest.
 */
export async function findByHash(client: PoolClient, m: HashMatch): Promise<TransactionRow | undefined> {
  const { rows } = await client.query<TransactionRow>(
    `select body, pii_mode from transactions
      where beneficiary_vasp_did = $1
        and lower(${INFO} ->> 'txHash') = lower($2)
        and (${INFO} ->> 'txHash' = $2 or $3)
        and ${INFO} ->> 'destination' = $4
        and ($5 = '' or coalesce(${INFO} ->> 'origin', '') in ('', $5))
        and ($6::uuid is null or id <> $6::uuid)
        and ($7::text is null or status = $7)
        and ${NOT_SUPERSEDED}
      order by status = 'INCOMPLETE', created_at, id
      limit 1
      for update`,
    [m.beneficiary, m.txHash, isHexHash(m.txHash), m.destination, m.origin, m.excludeId ?? null, m.status ?? null],
  );
  return rows[0];
}

export interface AmountMatch {
  beneficiary: string;
  destination: string;
  asset: string;
  amount: string;
  origin: string;
  windowHours: number;
  /** `without-hash`: a message the originator sent without its txHash yet; `incomplete`: a beneficiary's report. */
  kind: 'without-hash' | 'incomplete';
  /** For `incomplete`: the originator VASP that would complete it (a report naming another originator is left). */
  originator?: string;
}

/**
 * The oldest message to this destination, for this asset and amount, created within the window, locked:
 * - `without-hash`: an originator's message whose txHash is still empty and that was not cancelled;
 * - `incomplete`: an INCOMPLETE report whose originator VASP is unknown or `originator`.
 */
export async function findByAmount(client: PoolClient, m: AmountMatch): Promise<TransactionRow | undefined> {
  const kindFilter =
    m.kind === 'without-hash'
      ? `coalesce(${INFO} ->> 'txHash', '') = '' and status not in ('CANCELLED', 'INCOMPLETE')`
      : `status = 'INCOMPLETE' and (originator_vasp_did is null or originator_vasp_did = $7::text)`;
  const { rows } = await client.query<TransactionRow>(
    `select body, pii_mode from transactions
      where beneficiary_vasp_did = $1
        and ${INFO} ->> 'destination' = $2
        and transaction_asset = $3
        and transaction_amount = $4::numeric
        and ($5 = '' or coalesce(${INFO} ->> 'origin', '') in ('', $5))
        and created_at >= now() - make_interval(hours => $6)
        and ${kindFilter}
        and ${NOT_SUPERSEDED}
      order by created_at, id
      limit 1
      for update`,
    [
      m.beneficiary,
      m.destination,
      m.asset,
      m.amount,
      m.origin,
      m.windowHours,
      ...(m.kind === 'incomplete' ? [m.originator ?? null] : []),
    ],
  );
  return rows[0];
}

/** The INCOMPLETE row, now the originator's message: its lookup columns follow the body. */
export async function saveCompleted(
  client: PoolClient,
  tx: Transaction,
  row: { transactionRef: string | undefined; piiMode: TransactionRow['pii_mode'] },
): Promise<void> {
  await client.query(
    `update transactions set transaction_ref = $2, originator_vasp_did = $3, beneficiary_vasp_did = $4, status = $5,
       transaction_asset = $6, transaction_amount = $7, pii_mode = $8, body = $9, updated_at = $10
     where id = $1`,
    [
      tx.id,
      row.transactionRef ?? null,
      tx.originatorVASPdid ?? null,
      tx.beneficiaryVASPdid ?? null,
      tx.status,
      tx.transactionAsset,
      tx.transactionAmount,
      row.piiMode,
      tx,
      tx.updatedAt,
    ],
  );
}
