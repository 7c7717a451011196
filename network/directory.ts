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
  const owner = await network.call('GET /v1/addresses/address-ownerships', () =>
    network.api
      .get(`v1/addresses/address-ownerships/${encodeURIComponent(q.address)}`, {
        searchParams: { vasp_did: q.vaspDid, asset: q.asset },
      })
      .json<{ owner_vasp_did?: unknown }>(),
  );
  return typeof owner.owner_vasp_did === 'string' && owner.owner_vasp_did ? owner.owner_vasp_did : undefined;
}
