/**
 * The SQL of the transactions: the stored rows (the Transaction as the network answers it, with the columns it is
 * looked up and listed by), the transactionRef claims that make tx/create idempotent, and the listing.
 */
import type { Pool, PoolClient } from 'pg';
import type { Transaction } from '../model';
import { isHexHash } from './notify';

type Db = Pool | PoolClient;

export interface TransactionRow {
  body: Transaction;
  pii_mode: 'none' | 'client' | 'hosted';
}

export async function loadTransaction(db: Db, id: string, forUpdate = false): Promise<TransactionRow | undefined> {
  const { rows } = await db.query<TransactionRow>(
    `select body, pii_mode from transactions where id = $1${forUpdate ? ' for update' : ''}`,
    [id],
  );
  return rows[0];
}

export async function saveTransaction(
  client: PoolClient,
  tx: Transaction,
  piiMode: TransactionRow['pii_mode'],
): Promise<void> {
  await client.query(
    `update transactions set status = $2, beneficiary_vasp_did = $3, body = $4, pii_mode = $5, updated_at = $6 where id = $1`,
    [tx.id, tx.status, tx.beneficiaryVASPdid ?? null, tx, piiMode, tx.updatedAt],
  );
}

export async function insertTransaction(
  client: PoolClient,
  tx: Transaction,
  row: {
    transactionRef: string | undefined;
    /** Undefined only for an INCOMPLETE message whose originator VASP is unknown (notify.ts). */
    originator: string | undefined;
    beneficiary: string | undefined;
    asset: string;
    amount: string;
    piiMode: TransactionRow['pii_mode'];
    createdAt: string;
  },
): Promise<void> {
  await client.query(
    `insert into transactions (id, transaction_ref, originator_vasp_did, beneficiary_vasp_did, status, transaction_asset,
       transaction_amount, pii_mode, body, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
    [
      tx.id,
      row.transactionRef ?? null,
      row.originator ?? null,
      row.beneficiary ?? null,
      tx.status,
      row.asset,
      row.amount,
      row.piiMode,
      tx,
      row.createdAt,
    ],
  );
}

/**
 * Claims the originator's `ref` for a request whose body hashes to `hash`: true when the reference was free, or held
 * by an unfinished claim older than `staleSeconds` (its request is taken to have died).
 */
export async function claimTransactionRef(
  db: Db,
  originator: string,
  ref: string,
  hash: string,
  staleSeconds: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into transaction_ref_claims (originator_vasp_did, transaction_ref, request_hash) values ($1, $2, $4)
     on conflict (originator_vasp_did, transaction_ref) do update set claimed_at = now(), request_hash = excluded.request_hash
       where transaction_ref_claims.transaction_id is null
         and transaction_ref_claims.claimed_at < now() - make_interval(secs => $3)
     returning 1`,
    [originator, ref, staleSeconds, hash],
  );
  return !!rowCount;
}

export async function readTransactionRefClaim(
  db: Db,
  originator: string,
  ref: string,
): Promise<{ transaction_id: string | null; request_hash: string | null } | undefined> {
  const { rows } = await db.query<{ transaction_id: string | null; request_hash: string | null }>(
    'select transaction_id, request_hash from transaction_ref_claims where originator_vasp_did = $1 and transaction_ref = $2',
    [originator, ref],
  );
  return rows[0];
}

/** Ties the claim to the transaction it created: later requests with the reference answer that transaction. */
export async function completeTransactionRefClaim(
  client: PoolClient,
  originator: string,
  ref: string,
  transactionId: string,
): Promise<void> {
  await client.query(
    'update transaction_ref_claims set transaction_id = $3 where originator_vasp_did = $1 and transaction_ref = $2',
    [originator, ref, transactionId],
  );
}

/** Lets the reference go when the request that claimed it failed before creating a transaction. */
export async function releaseTransactionRefClaim(db: Db, originator: string, ref: string): Promise<void> {
  await db.query(
    'delete from transaction_ref_claims where originator_vasp_did = $1 and transaction_ref = $2 and transaction_id is null',
    [originator, ref],
  );
}

/** tx/list's sort orders and their columns; `id` breaks ties. */
const SORTS: Record<string, string> = {
  'createdAt:ASC': 'created_at asc',
  'createdAt:DESC': 'created_at desc',
  'updatedAt:ASC': 'updated_at asc',
  'updatedAt:DESC': 'updated_at desc',
  'transactionAmount:ASC': 'transaction_amount asc',
  'transactionAmount:DESC': 'transaction_amount desc',
};

export const TRANSACTION_SORTS: readonly string[] = Object.keys(SORTS);

// Own keys only: `constructor` or `__proto__` would find Object's and put a function's text into the SQL.
export const isTransactionSort = (sort: string): boolean => Object.hasOwn(SORTS, sort);

export interface TransactionListing {
  vaspDid: string;
  direction: 'incoming' | 'outgoing' | 'internal' | undefined;
  statuses: string[];
  transactionRef: string | undefined;
  transactionAsset: string | undefined;
  /** An address the transfer was sent from or to (`transactionBlockchainInfo`'s origin or destination). */
  wallet?: string;
  /** One of TRANSACTION_SORTS. */
  sort: string;
  page: number;
  perPage: number;
}

/** One page of the VASP's transactions and how many match in all. */
export async function listTransactionRows(
  db: Db,
  query: TransactionListing,
): Promise<{ rows: { body: Transaction }[]; total: number }> {
  if (!isTransactionSort(query.sort)) throw new Error(`not a transaction sort: ${query.sort}`);
  const params: unknown[] = [query.vaspDid];
  const direction = query.direction;
  const where = [
    direction === 'incoming'
      ? 'beneficiary_vasp_did = $1'
      : direction === 'outgoing'
        ? 'originator_vasp_did = $1'
        : direction === 'internal'
          ? '(originator_vasp_did = $1 and beneficiary_vasp_did = $1)'
          : '(originator_vasp_did = $1 or beneficiary_vasp_did = $1)',
  ];
  if (query.statuses.length) {
    params.push(query.statuses);
    where.push(`status = any($${params.length})`);
  }
  for (const [value, column] of [
    [query.transactionRef, 'transaction_ref'],
    [query.transactionAsset, 'transaction_asset'],
  ] as const) {
    if (value !== undefined) {
      params.push(value);
      where.push(`${column} = $${params.length}`);
    }
  }
  if (query.wallet !== undefined) {
    // A hex address in any case, as tx/notify compares hashes; others (base58, bech32) as written.
    params.push(query.wallet);
    const n = `$${params.length}`;
    const field = (name: string) => `body -> 'transactionBlockchainInfo' ->> '${name}'`;
    const same = isHexHash(query.wallet)
      ? (name: string) => `lower(${field(name)}) = lower(${n})`
      : (name: string) => `${field(name)} = ${n}`;
    where.push(`(${same('destination')} or ${same('origin')})`);
  }
  const filter = where.join(' and ');
  const total = (await db.query<{ n: number }>(`select count(*)::int as n from transactions where ${filter}`, params))
    .rows[0]!.n;
  params.push(query.perPage, query.page * query.perPage);
  const { rows } = await db.query<{ body: Transaction }>(
    `select body from transactions where ${filter} order by ${SORTS[query.sort]}, id limit $${params.length - 1} offset $${params.length}`,
    params,
  );
  return { rows, total };
}
