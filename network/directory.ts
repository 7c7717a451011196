import { LRUCache } from 'lru-cache';
import type { NetworkClient } from './client';

export interface ViewerSummary {
  userDid: string;
  vasps: string[];
}

/** A VASP's entry in the directory, as far as this system reads it. */
export interface VaspProfile {
  did: string;
  name?: string;
  /** The did:key its counterparties encrypt to; absent, null or empty when it publishes none. */
  pii_didkey?: unknown;
  [field: string]: unknown;
}

/** `GET /auth/viewer`: proves the credentials work and lists the VASPs they control. */
export async function fetchViewer(network: NetworkClient): Promise<ViewerSummary> {
  const viewer = await network.call('GET /auth/viewer', () =>
    network.api.get('auth/viewer').json<{ did: string; vasps?: string[] }>(),
  );
  return { userDid: viewer.did, vasps: viewer.vasps ?? [] };
}

/** `GET /tf/simple/vasps/:did?fields=pii_didkey`; a NotFoundError (the network's 404) for a VASP it does not know. */
export function vaspProfile(network: NetworkClient, vaspDid: string): Promise<VaspProfile> {
  return network.call(`GET /tf/simple/vasps/${vaspDid}`, () =>
    network.api
      .get(`tf/simple/vasps/${encodeURIComponent(vaspDid)}`, { searchParams: { fields: 'pii_didkey' } })
      .json<VaspProfile>(),
  );
}

/** `POST /tf/vasps/update` with `did` as the VASP's `pii_didkey`. */
export async function publishPiiDidKey(network: NetworkClient, vaspDid: string, did: string): Promise<void> {
  await network.call('POST /tf/vasps/update', () =>
    network.api
      .post('tf/vasps/update', {
        json: { did: vaspDid, fields: [{ fieldName: 'pii_didkey', values: [{ value: did }] }] },
      })
      .json(),
  );
}

/**
 * `GET /v1/addresses/address-ownerships/:address`: the VASP the network knows as the address's owner, as `vaspDid`
 * (the asking VASP) sees it; a NotFoundError when it knows none.
 */
export async function addressOwner(
  network: NetworkClient,
  q: { address: string; vaspDid: string; asset: string },
): Promise<string | undefined> {
  const owner = await network.call('GET /v1/addresses/address-ownerships/:id', () =>
    network.api
      .get(`v1/addresses/address-ownerships/${encodeURIComponent(q.address)}`, {
        searchParams: { vasp_did: q.vaspDid, asset: q.asset },
      })
      .json<{ owner_vasp_did?: unknown }>(),
  );
  return typeof owner.owner_vasp_did === 'string' && owner.owner_vasp_did ? owner.owner_vasp_did : undefined;
}

/**
 * VASPs' names as the directory gives them, for people to read (the console shows them with the DID on hover). Each
 * DID is asked once per `ttlMs` (a name it does not have too); a directory that cannot answer leaves it unnamed until
 * the next ask.
 */
export function vaspNames(
  network: NetworkClient,
  opts: { ttlMs?: number; max?: number } = {},
): (dids: string[]) => Promise<Record<string, string | null>> {
  const cache = new LRUCache<string, { name: string | null }>({
    max: opts.max ?? 10_000,
    ttl: opts.ttlMs ?? 3_600_000,
  });
  const nameOf = async (did: string): Promise<string | null> => {
    const hit = cache.get(did);
    if (hit) return hit.name;
    try {
      const profile = await vaspProfile(network, did);
      const name = typeof profile.name === 'string' && profile.name.trim() ? profile.name.trim() : null;
      cache.set(did, { name });
      return name;
    } catch (e) {
      // Not in the directory: no name, remembered; unreachable or refused: asked again next time.
      if ((e as { retryable?: boolean }).retryable === false || (e as Error).name === 'NotFoundError')
        cache.set(did, { name: null });
      return null;
    }
  };
  return async (dids) => Object.fromEntries(await Promise.all(dids.map(async (d) => [d, await nameOf(d)] as const)));
}
