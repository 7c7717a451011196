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

/** One page of `GET /tx/list?vaspDID=` (both directions, oldest first; at most 100 per page, the network's limit). */
export function txList<T>(network: NetworkClient, vaspDid: string, page: number): Promise<{ transactions: T[]; paginateInfo?: { totalPages?: number } }> {
  return network.call('GET /tx/list', () =>
    network.api.get('tx/list', { searchParams: { vaspDID: vaspDid, page, resultsPerPage: 100, sort: 'createdAt:ASC' } })
      .json<{ transactions: T[]; paginateInfo?: { totalPages?: number } }>(),
  );
}
