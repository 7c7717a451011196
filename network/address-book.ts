import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { UpstreamRejectedError, UpstreamUnavailableError, type AppError } from '../lib/errors';
import type { NetworkClient } from './client';

/**
 * The network's address-book endpoints, in its shapes. Everything but the upload goes
 * through `network.api` (bearer auth, typed errors); the upload URL carries its own credential, so the CSV is POSTed
 * with plain fetch and no Authorization header.
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
 * One page of the VASP's own addresses. Pages are counted from 0 as on the network's other paged listings; callers stop at the first short page, so a 1-based server would only repeat a page,
 * which the staging table's key absorbs.
 */
export function listPage(
  network: NetworkClient,
  vaspDid: string,
  page: number,
  perPage = LISTING_PAGE_SIZE,
): Promise<ListingPage> {
  return network.call(
    `GET /v1/addresses page ${page}`,
    () =>
      network.api
        .get('v1/addresses', {
          searchParams: {
            vasp_did: vaspDid,
            source: 'ADDRESS_GRAPH',
            source_type: 'INTERNAL',
            page,
            per_page: perPage,
          },
        })
        .json<ListingPage>(),
    { idempotent: true },
  );
}

/** The listing's total: what the network holds for the VASP right now. */
export async function networkTotal(network: NetworkClient, vaspDid: string): Promise<number> {
  const page = await listPage(network, vaspDid, 0, 1);
  return Number(page.pagination?.total ?? 0);
}

/** Deletion is asynchronous at the network: 202 `{}` means "processing". */
export async function deleteAddresses(
  network: NetworkClient,
  vaspDid: string,
  addresses: readonly string[],
): Promise<void> {
  // The list travels in the query string, comma-separated (the entry rules forbid commas in addresses).
  const query = `addresses=${encodeURIComponent(addresses.join(','))}&vasp_did=${encodeURIComponent(vaspDid)}`;
  await network.call(
    `DELETE /v1/addresses (${addresses.length})`,
    () => network.api.delete(`v1/addresses?${query}`).then(() => undefined),
    // Deleting what is already gone changes nothing.
    { idempotent: true },
  );
}

/** Longest `addresses=` value sent in one DELETE, so the request line stays far below servers' header limits. */
export const DELETE_QUERY_BUDGET = 6000;

export async function registerCustomer(
  network: NetworkClient,
  body: { vaspDID: string; address: string; customerRef: string; asset?: string },
): Promise<void> {
  await network.call(
    'POST /address/registerCustomer',
    () => network.api.post('address/registerCustomer', { json: body }).then(() => undefined),
    // The same registration again leaves the same entry (or answers 409, which callers take as done).
    { idempotent: true },
  );
}

export async function requestUploadUrl(network: NetworkClient, vaspDid: string): Promise<string> {
  const body = await network.call(
    `GET /address/upload/${vaspDid}`,
    () => network.api.get(`address/upload/${encodeURIComponent(vaspDid)}`).json<{ uploadUrl?: string }>(),
    { idempotent: true },
  );
  if (!body.uploadUrl) throw new Error('the network answered GET /address/upload without an uploadUrl');
  return body.uploadUrl;
}

export interface UploadOutcome {
  bytes: number;
  response: UploadResponse;
}

/** Why the upload URL itself was refused (expired, or its credential rejected): worth asking for a new one. */
export class UploadUrlRefused extends Error {}

/**
 * POSTs one CSV as multipart/form-data (one file part named `file`) to the upload URL, streaming: the file is never
 * held in memory, and its size is checked while it streams, so nothing above `maxBytes` ever leaves.
 */
export async function postCsv(
  uploadUrl: string,
  fileName: string,
  csv: Readable,
  maxBytes: number,
  timeoutMs: number,
): Promise<UploadOutcome> {
  const boundary = `----tro-${randomBytes(12).toString('hex')}`;
  const preamble = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  const epilogue = Buffer.from(`\r\n--${boundary}--\r\n`);
  let bytes = 0;
  async function* body() {
    yield preamble;
    for await (const piece of csv as AsyncIterable<Buffer | string>) {
      const buf = typeof piece === 'string' ? Buffer.from(piece) : piece;
      bytes += buf.length;
      if (bytes > maxBytes) {
        throw new UpstreamRejectedError(
          `CSV chunk ${fileName} would exceed ${maxBytes} bytes; nothing above the limit is sent`,
          {
            limitBytes: maxBytes,
          },
        );
      }
      yield buf;
    }
    yield epilogue;
  }
  let response: Response;
  try {
    response = await fetch(uploadUrl, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Readable.from(body()) as never,
      duplex: 'half',
      signal: AbortSignal.timeout(timeoutMs),
    } as RequestInit & { duplex: 'half' });
  } catch (e) {
    const cause = (e as Error & { cause?: unknown }).cause;
    if (cause instanceof UpstreamRejectedError) throw cause;
    if (e instanceof UpstreamRejectedError) throw e;
    throw new UpstreamUnavailableError(`POST upload URL: network unreachable (${(e as Error).message})`);
  }
  const text = await response.text().catch(() => '');
  if (!response.ok) throw uploadError(response.status, text);
  let parsed: UploadResponse;
  try {
    parsed = JSON.parse(text) as UploadResponse;
  } catch {
    throw new UpstreamRejectedError(
      `POST upload URL: the network answered ${response.status} with a body that is not JSON`,
    );
  }
  return { bytes, response: parsed };
}

function uploadError(status: number, text: string): AppError | UploadUrlRefused {
  let message = text.slice(0, 200);
  try {
    const body = JSON.parse(text) as { err?: { message?: string } | string; message?: string };
    message = typeof body.err === 'string' ? body.err : (body.err?.message ?? body.message ?? message);
  } catch {
    /* not JSON */
  }
  const what = `POST upload URL: network answered ${status}: ${message}`;
  if (status === 401 || status === 403) return new UploadUrlRefused(what);
  if (status === 413)
    return new UpstreamRejectedError(`${what} (the file is above the network's size limit)`, { networkStatus: status });
  if (status === 408 || status === 429 || status >= 500)
    return new UpstreamUnavailableError(what, { networkStatus: status });
  return new UpstreamRejectedError(what, { networkStatus: status });
}
