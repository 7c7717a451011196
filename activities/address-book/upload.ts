import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import {
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type AppError,
} from '../../lib/errors';
import type { UploadResponse } from './network';

export const CSV_COLUMNS = ['asset', 'address', 'customerRef'] as const;
/** `asset,address,customerRef\n`: the header the network requires (network-api-facts.md §5). */
export const CSV_HEADER_BYTES = Buffer.byteLength(`${CSV_COLUMNS.join(',')}\n`);

/**
 * The size of one row in the CSV chunkCsv writes, computed in SQL when the delta is made so chunks can be cut
 * to a byte budget before anything is read: fields are joined by commas and end with a newline; a field is quoted
 * (and its quotes doubled) only when it holds a comma or a quote. The entry rules keep those out of assets and
 * addresses and keep line breaks out of everything, so only customerRef can need quoting.
 */
export const ROW_BYTES_SQL = `(octet_length(asset) + octet_length(address) + 3 +
  case when customer_ref ~ '[,"]' then octet_length(replace(customer_ref, '"', '""')) + 2 else octet_length(customer_ref) end)`;

const READ_BATCH = 10_000;

/**
 * One CSV field as csv-stringify writes it (and ROW_BYTES_SQL counts it): quoted, its quotes doubled, only when it
 * holds a comma, a quote or a line break. Written by hand: csv-stringify took 90–175 ms per 50,000-row chunk where
 * this takes 40 ms, and the first chunk's time is the network's idle time.
 */
const field = (v: string) => (/[,"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** The chunk's rows, read from the run's delta in batches (keyset on seq), as CSV text, one piece per batch. */
export function chunkCsv(
  pool: Pool,
  runId: string,
  firstSeq: number,
  lastSeq: number,
  onBatch: (rows: number) => void,
): Readable {
  async function* pieces() {
    yield `${CSV_COLUMNS.join(',')}\n`;
    let after = firstSeq - 1;
    for (;;) {
      const { rows } = await pool.query<[string, string, string]>({
        text: `select asset, address, customer_ref from address_book_delta
                where run_id = $1 and action = 'add' and seq > $2 and seq <= $3 order by seq limit ${READ_BATCH}`,
        values: [runId, after, lastSeq],
        rowMode: 'array',
      });
      if (rows.length === 0) return;
      after += rows.length;
      onBatch(rows.length);
      let text = '';
      for (const [asset, address, customerRef] of rows) text += `${field(asset)},${field(address)},${field(customerRef)}\n`;
      yield text;
      if (after >= lastSeq) return;
    }
  }
  return Readable.from(pieces());
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
        throw new UpstreamRejectedError(`CSV chunk ${fileName} would exceed ${maxBytes} bytes; nothing above the limit is sent`, {
          limitBytes: maxBytes,
        });
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
    throw new UpstreamRejectedError(`POST upload URL: the network answered ${response.status} with a body that is not JSON`);
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
  if (status === 413) return new UpstreamRejectedError(`${what} (the file is above the network's size limit)`, { networkStatus: status });
  if (status === 408 || status === 429 || status >= 500) return new UpstreamUnavailableError(what, { networkStatus: status });
  return new UpstreamRejectedError(what, { networkStatus: status });
}
