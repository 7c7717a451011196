/** `tx/list`: one VASP's transactions, filtered, sorted and paged as the network's listing is. */
import type { Pool } from 'pg';
import type { Access } from '../auth/access';
import { forbidden, notFound } from '../errors';
import { validationError, type Transaction } from './model';
import { isStatus } from './states';

export async function listTransactions(pool: Pool, access: Access, query: Record<string, unknown>) {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw validationError(`${name}: must be given once`);
    return v;
  };
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = one(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) throw validationError(`${name}: must be a whole number from ${min} to ${max}`);
    return n;
  };
  const vaspDid = one('vaspDID');
  if (!vaspDid) throw validationError('List of missing fields: vaspDID');
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} cannot act for VASP ${vaspDid}`);
  const page = int('page', 0, 0, 1_000_000);
  const perPage = int('resultsPerPage', 100, 1, 100);
  const rawStatus = query.status;
  const statuses = (Array.isArray(rawStatus) ? rawStatus : rawStatus === undefined || rawStatus === '' ? [] : [rawStatus])
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = statuses.find((s) => !isStatus(s));
  if (bad) throw validationError(`status: ${bad} is not a transaction status`);
  const direction = one('txDirection');
  if (direction !== undefined && !['incoming', 'outgoing', 'internal'].includes(direction)) {
    throw validationError('txDirection: must be incoming, outgoing or internal');
  }
  const sort = one('sort') ?? 'createdAt:DESC';
  const SORTS: Record<string, string> = {
    'createdAt:ASC': 'created_at asc', 'createdAt:DESC': 'created_at desc', 'updatedAt:ASC': 'updated_at asc',
    'updatedAt:DESC': 'updated_at desc', 'transactionAmount:ASC': 'transaction_amount asc', 'transactionAmount:DESC': 'transaction_amount desc',
  };
  // Own keys only: `constructor` or `__proto__` would find Object's and put a function's text into the SQL.
  if (!Object.hasOwn(SORTS, sort)) throw validationError(`sort: must be one of ${Object.keys(SORTS).join(', ')}`);

  const params: unknown[] = [vaspDid];
  const where = [
    direction === 'incoming' ? 'beneficiary_vasp_did = $1'
      : direction === 'outgoing' ? 'originator_vasp_did = $1'
        : direction === 'internal' ? '(originator_vasp_did = $1 and beneficiary_vasp_did = $1)'
          : '(originator_vasp_did = $1 or beneficiary_vasp_did = $1)',
  ];
  if (statuses.length) {
    params.push(statuses);
    where.push(`status = any($${params.length})`);
  }
  for (const [name, column] of [['transactionRef', 'transaction_ref'], ['transactionAsset', 'transaction_asset']] as const) {
    const v = one(name);
    if (v !== undefined) {
      params.push(v);
      where.push(`${column} = $${params.length}`);
    }
  }
  const filter = where.join(' and ');
  const total = (await pool.query<{ n: number }>(`select count(*)::int as n from transactions where ${filter}`, params)).rows[0]!.n;
  params.push(perPage, page * perPage);
  const { rows } = await pool.query<{ body: Transaction }>(
    `select body from transactions where ${filter} order by ${SORTS[sort]}, id limit $${params.length - 1} offset $${params.length}`,
    params,
  );
  // TransactionResolved: the Transaction without pii.
  const transactions = rows.map(({ body }) => {
    const { pii: _pii, ...rest } = body;
    return rest;
  });
  return {
    transactions,
    paginateInfo: {
      totalItems: total,
      itemCount: transactions.length,
      itemsPerPage: perPage,
      totalPages: Math.ceil(total / perPage),
      currentPage: page,
    },
  };
}
