import type { NetworkClient } from './client';

/** One stored value at the personal-data service: a flattened IVMS101 key and its (encrypted) value or CID. */
export interface PiiEntry {
  key: string;
  value: string;
}

/** `POST {pii}/put`: stores the values, answers one `{key, value: CID}` per value (or a body the caller must check). */
export async function putPii(
  network: NetworkClient,
  fromDid: string,
  toDid: string,
  entries: PiiEntry[],
): Promise<unknown> {
  const stored = await network.call('POST {pii}/put', () =>
    network.pii.post('put', { json: { fromDID: fromDid, toDID: toDid, data: entries } }).json<unknown>(),
  );
  return Array.isArray(stored) ? stored : (stored as { data?: unknown })?.data;
}

/** `POST {pii}/get`: the stored values of the CIDs, each as the service returns it (an entry, or its JSON text). */
export async function getPii(network: NetworkClient, cids: string[]): Promise<PiiEntry[]> {
  const got = await network.call('POST {pii}/get', () =>
    network.pii.post('get', { json: cids }).json<{ cid: string; data: string | PiiEntry }[]>(),
  );
  return (Array.isArray(got) ? got : []).map((item) => {
    const data = typeof item.data === 'string' ? (JSON.parse(item.data) as PiiEntry) : item.data;
    return { key: data.key, value: data.value };
  });
}

/** `GET {pii}/get-escrow-didkey?vaspDID=`: the VASP's service-managed (escrow) did:key, if the service shows one. */
export async function escrowDidKey(network: NetworkClient, vaspDid: string): Promise<string | undefined> {
  const body = await network.call('GET {pii}/get-escrow-didkey', () =>
    network.pii.get('get-escrow-didkey', { searchParams: { vaspDID: vaspDid } }).json<{ did?: unknown }>(),
  );
  return typeof body.did === 'string' ? body.did : undefined;
}
