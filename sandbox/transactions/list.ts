/** `tx/list`: one VASP's transactions, filtered, sorted and paged as the network's listing is. */
import type { Pool } from 'pg';
import type { Access } from '../auth/access';
import { forbidden, notFound } from '../errors';
import { validationError } from './model';
import { isStatus } from './states';
import { isTransactionSort, listTransactionRows, TRANSACTION_SORTS } from './store';

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
    if (!/^\d+$/.test(raw) || n < min || n > max)
      throw validationError(`${name}: must be a whole number from ${min} to ${max}`);
    return n;
  };
  const vaspDid = one('vaspDID');
  if (!vaspDid) throw validationError('List of missing fields: vaspDID');
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} cannot act for VASP ${vaspDid}`);
  const page = int('page', 0, 0, 1_000_000);
  const perPage = int('resultsPerPage', 100, 1, 100);
  const rawStatus = query.status;
  const statuses = (
    Array.isArray(rawStatus) ? rawStatus : rawStatus === undefined || rawStatus === '' ? [] : [rawStatus]
  )
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = statuses.find((s) => !isStatus(s));
  if (bad) throw validationError(`status: ${bad} is not a transaction status`);
  const direction = one('txDirection');
  if (direction !== undefined && direction !== 'incoming' && direction !== 'outgoing' && direction !== 'internal') {
    throw validationError('txDirection: must be incoming, outgoing or internal');
  }
  const sort = one('sort') ?? 'createdAt:DESC';
  if (!isTransactionSort(sort)) throw validationError(`sort: must be one of ${TRANSACTION_SORTS.join(', ')}`);
  const transactionRef = one('transactionRef');
  const transactionAsset = one('transactionAsset');
  const wallet = one('wallet');
  if (wallet !== undefined && wallet.length > 1024) throw validationError('wallet: must be at most 1024 characters');

  const { rows, total } = await listTransactionRows(pool, {
    vaspDid,
    direction,
    statuses,
    transactionRef,
    transactionAsset,
    wallet,
    sort,
    page,
    perPage,
  });
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
