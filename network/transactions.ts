import { RateLimitedError } from '../lib/errors';
import type { NetworkClient } from './client';

/** The network's Transaction object; only the fields this system reads are typed. */
export interface NetworkTransaction {
  id: string;
  status?: string;
  transactionRef?: string;
  transactionType?: string;
  /** When the status last moved (ISO 8601): orders updates that arrive out of order. */
  updatedAt?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  pii?: Record<string, unknown>;
  ivms101?: Record<string, unknown>;
  [field: string]: unknown;
}

/** `GET /tx/info?id=`: the network's Transaction, typed as far as the caller reads it. */
export function txInfo<T extends { status?: string } = NetworkTransaction>(
  network: NetworkClient,
  id: string,
): Promise<T> {
  return network.call('GET /tx/info', () => network.api.get('tx/info', { searchParams: { id } }).json<T>());
}

/**
 * An action at the network that may already have happened (a retried activity, the network's own automation, the
 * counterparty's answer arriving first): when the network refuses it and the transaction's status is already one of
 * `settled`, the action is over and the transaction is returned with `acted: false`; any other refusal is thrown.
 */
export async function txAction<T extends { status?: string }>(
  network: NetworkClient,
  what: string,
  id: string,
  settled: ReadonlySet<string>,
  send: () => Promise<T>,
): Promise<{ tx: T; acted: boolean }> {
  try {
    return { tx: await network.call(what, send), acted: true };
  } catch (e) {
    // Rate-limited, the action did not happen; asking now would only meet the same block.
    if (e instanceof RateLimitedError) throw e;
    const current = await txInfo<T>(network, id);
    if (current.status !== undefined && settled.has(current.status)) return { tx: current, acted: false };
    throw e;
  }
}

/** `POST /tx/create`: the body as the network takes it (personal data already encrypted or, hosted, in plain). */
export function txCreate(network: NetworkClient, body: Record<string, unknown>): Promise<NetworkTransaction> {
  return network.call('POST /tx/create', () =>
    network.api.post('tx/create', { json: body }).json<NetworkTransaction>(),
  );
}

/** `POST /tx/update`: the agent's update, passed on as given. */
export function txUpdate(
  network: NetworkClient,
  body: Record<string, unknown> & { id: string },
): Promise<NetworkTransaction> {
  return network.call('POST /tx/update', () =>
    network.api.post('tx/update', { json: body }).json<NetworkTransaction>(),
  );
}

/** `POST /tx/cancel`, unless the transaction is already one of `settled` (see txAction). */
export function txCancel(network: NetworkClient, id: string, reason: string, settled: ReadonlySet<string>) {
  return txAction(network, 'POST /tx/cancel', id, settled, () =>
    network.api.post('tx/cancel', { json: { id, reason } }).json<NetworkTransaction>(),
  );
}

/** `POST /tx/redirect?id=&to=`: a gateway hands an incoming transaction to one of its subsidiaries. */
export function txRedirect<T extends { status?: string } = NetworkTransaction>(
  network: NetworkClient,
  id: string,
  to: string,
): Promise<T> {
  return network.call('POST /tx/redirect', () =>
    network.api.post('tx/redirect', { searchParams: { id, to } }).json<T>(),
  );
}

/** The beneficiary's answers to an incoming transaction; each counts as done once the status is one of `settled`. */
export function txConfirm<T extends { status?: string }>(
  network: NetworkClient,
  id: string,
  settled: ReadonlySet<string>,
) {
  return txAction<T>(network, 'POST /tx/confirm', id, settled, () =>
    network.api.post('tx/confirm', { searchParams: { id } }).json<T>(),
  );
}

export function txAccept<T extends { status?: string }>(
  network: NetworkClient,
  id: string,
  settled: ReadonlySet<string>,
) {
  return txAction<T>(network, 'POST /tx/accept', id, settled, () =>
    network.api.post('tx/accept', { searchParams: { id } }).json<T>(),
  );
}

export function txDecline<T extends { status?: string }>(
  network: NetworkClient,
  id: string,
  reason: string,
  settled: ReadonlySet<string>,
) {
  return txAction<T>(network, 'POST /tx/decline', id, settled, () =>
    network.api.post('tx/decline', { json: { id, reason } }).json<T>(),
  );
}

export function txReject<T extends { status?: string }>(
  network: NetworkClient,
  id: string,
  reason: string,
  settled: ReadonlySet<string>,
) {
  return txAction<T>(network, 'POST /tx/reject', id, settled, () =>
    network.api.post('tx/reject', { json: { id, reason } }).json<T>(),
  );
}

/** The beneficiary is not ready to answer yet (`POST /tx/notReady`): the originator sees NOT_READY. */
export function txNotReady<T extends { status?: string }>(
  network: NetworkClient,
  id: string,
  reason: string,
  settled: ReadonlySet<string>,
) {
  return txAction<T>(network, 'POST /tx/notReady', id, settled, () =>
    network.api.post('tx/notReady', { json: { id, reason } }).json<T>(),
  );
}

/** One page of `GET /tx/list` (`page` from 0, at most 100 per page, the network's limit). */
export interface TxListPage<T> {
  transactions: T[];
  paginateInfo?: { totalPages?: number; currentPage?: number };
}

export interface TxListQuery {
  vaspDID: string;
  page: number;
  txDirection?: 'incoming' | 'outgoing';
  status?: string[];
  sort?: string;
  /** Only transfers sent from or to this address. */
  wallet?: string;
}

export function txList<T>(network: NetworkClient, query: TxListQuery): Promise<TxListPage<T>> {
  const searchParams = new URLSearchParams({ vaspDID: query.vaspDID, page: String(query.page), resultsPerPage: '100' });
  if (query.txDirection) searchParams.set('txDirection', query.txDirection);
  if (query.sort) searchParams.set('sort', query.sort);
  if (query.wallet) searchParams.set('wallet', query.wallet);
  for (const s of query.status ?? []) searchParams.append('status', s);
  return network.call('GET /tx/list', () => network.api.get('tx/list', { searchParams }).json<TxListPage<T>>());
}

/**
 * The transactions of `GET /tx/list`, page by page from page 0, up to `maxPages`. Ends after an empty page or the last
 * by `paginateInfo.totalPages`; a page without `totalPages` is the last unless `untilShortPage`, which reads on while
 * pages are full (100). A caller that has what it needs leaves the loop (`break`), and no further page is read.
 */
export async function* txListPages<T>(
  network: NetworkClient,
  query: Omit<TxListQuery, 'page'>,
  options: { maxPages?: number; untilShortPage?: boolean } = {},
): AsyncGenerator<T[], void, undefined> {
  for (let page = 0; page < (options.maxPages ?? Infinity); page++) {
    const { transactions = [], paginateInfo } = await txList<T>(network, { ...query, page });
    yield transactions;
    const last =
      paginateInfo?.totalPages !== undefined
        ? page + 1 >= paginateInfo.totalPages
        : !options.untilShortPage || transactions.length < 100;
    if (last || transactions.length === 0) return;
  }
}

/** `POST /tx/notify`'s body: the beneficiary VASP's report of an on-chain deposit (the spec's TransactionNotifyRequest). */
export interface DepositNotice {
  txHash: string;
  /** Base units, digits. */
  transactionAmount: string;
  transactionAsset: string;
  destination: string;
  beneficiaryVASPdid: string;
  origin?: string;
  /** An opaque reference of the deposit (never a customer's name). */
  customerRef?: string;
}

/**
 * `POST /tx/notify`: the network answers the message the deposit belongs to (by txHash, or by destination, asset and
 * amount when the originator has not added its txHash yet), else a new INCOMPLETE one it asks the originator to
 * complete. Reporting the same deposit again answers the same message, so a retry is safe.
 */
export function notifyDeposit(network: NetworkClient, body: DepositNotice): Promise<NetworkTransaction> {
  return network.call('POST /tx/notify', () =>
    network.api.post('tx/notify', { json: body }).json<NetworkTransaction>(),
  );
}
