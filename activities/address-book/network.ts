import type { NetworkClient } from '../network/network-client';

/**
 * The network's address-book endpoints, in its shapes (network-api-facts.md §5). Everything but the upload goes
 * through `network.api` (bearer auth, typed errors); the upload URL carries its own credential, so the CSV is POSTed
 * with plain fetch and no Authorization header (interface.md, Authentication 6).
 */

export interface ListedAddress {
  address: string;
  owner_vasp_did?: string;
  customer_did?: string | null;
  customer_ref?: string | null;
}

export interface ListingPage {
  pagination: { page: number; per_page: number; total: number };
  metadata?: { source?: string };
  data: ListedAddress[];
}

export interface UploadResponse {
  text?: string;
  uploadedFile?: {
    locationURL?: string;
    mimeType?: string;
    name?: string;
    metadata?: { key?: string; uploadType?: string; userDID?: string; extra?: { vaspDID?: string; counter?: number } };
  };
}

/** The network's maximum page size of GET /v1/addresses. */
export const LISTING_PAGE_SIZE = 1000;

/**
 * One page of the VASP's own addresses. Pages are counted from 0 as on the network's other paged listings
 * (network-api-facts.md §10); callers stop at the first short page, so a 1-based server would only repeat a page,
 * which the staging table's key absorbs.
 */
export function listPage(network: NetworkClient, vaspDid: string, page: number, perPage = LISTING_PAGE_SIZE): Promise<ListingPage> {
  return network.call(`GET /v1/addresses page ${page}`, () =>
    network.api
      .get('v1/addresses', {
        searchParams: { vasp_did: vaspDid, source: 'ADDRESS_GRAPH', source_type: 'INTERNAL', page, per_page: perPage },
      })
      .json<ListingPage>(),
  );
}

/** The listing's total: what the network holds for the VASP right now. */
export async function networkTotal(network: NetworkClient, vaspDid: string): Promise<number> {
  const page = await listPage(network, vaspDid, 0, 1);
  return Number(page.pagination?.total ?? 0);
}

/** Deletion is asynchronous at the network: 202 `{}` means "processing". */
export async function deleteAddresses(network: NetworkClient, vaspDid: string, addresses: readonly string[]): Promise<void> {
  // The list travels in the query string, comma-separated (the entry rules forbid commas in addresses).
  const query = `addresses=${encodeURIComponent(addresses.join(','))}&vasp_did=${encodeURIComponent(vaspDid)}`;
  await network.call(`DELETE /v1/addresses (${addresses.length})`, () =>
    network.api.delete(`v1/addresses?${query}`).then(() => undefined),
  );
}

/** Longest `addresses=` value sent in one DELETE, so the request line stays far below servers' header limits. */
export const DELETE_QUERY_BUDGET = 6000;

export async function registerCustomer(
  network: NetworkClient,
  body: { vaspDID: string; address: string; customerRef: string; asset?: string },
): Promise<void> {
  await network.call('POST /address/registerCustomer', () =>
    network.api.post('address/registerCustomer', { json: body }).then(() => undefined),
  );
}

export async function requestUploadUrl(network: NetworkClient, vaspDid: string): Promise<string> {
  const body = await network.call(`GET /address/upload/${vaspDid}`, () =>
    network.api.get(`address/upload/${encodeURIComponent(vaspDid)}`).json<{ uploadUrl?: string }>(),
  );
  if (!body.uploadUrl) throw new Error('the network answered GET /address/upload without an uploadUrl');
  return body.uploadUrl;
}
