import type { NetworkClient } from './network-client';

/** `GET /tx/info?id=`: the network's Transaction, typed as far as the caller reads it. */
export function txInfo<T extends { status?: string }>(network: NetworkClient, id: string): Promise<T> {
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
    const current = await txInfo<T>(network, id);
    if (current.status !== undefined && settled.has(current.status)) return { tx: current, acted: false };
    throw e;
  }
}

/** One page of `GET /tx/list` (network-api-facts.md: `page` from 0, at most 100 per page, the network's limit). */
export interface TxListPage<T> {
  transactions: T[];
  paginateInfo?: { totalPages?: number; currentPage?: number };
}

export function txList<T>(
  network: NetworkClient,
  query: { vaspDID: string; page: number; txDirection?: 'incoming' | 'outgoing'; status?: string[]; sort?: string },
): Promise<TxListPage<T>> {
  const searchParams = new URLSearchParams({ vaspDID: query.vaspDID, page: String(query.page), resultsPerPage: '100' });
  if (query.txDirection) searchParams.set('txDirection', query.txDirection);
  if (query.sort) searchParams.set('sort', query.sort);
  for (const s of query.status ?? []) searchParams.append('status', s);
  return network.call('GET /tx/list', () => network.api.get('tx/list', { searchParams }).json<TxListPage<T>>());
}
