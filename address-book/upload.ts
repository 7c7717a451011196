/**
 * Uploading a run's additions: each planned chunk as one CSV (streamed from the run's delta, never held in memory)
 * POSTed to an upload URL of the network, exactly once.
 */
import { Readable } from 'node:stream';
import { CSV_COLUMNS } from './csv';
import { isAppError, UpstreamRejectedError, ValidationError } from '../lib/errors';
import { setRunPhase } from './store/runs';
import {
  getChunk,
  markChunkPlanned,
  markChunkUploaded,
  markChunkUploadedByCount,
  markChunkUploading,
} from './store/chunks';
import { additionRows, newAdditionsThrough } from './store/staging';
import { networkTotal, postCsv, requestUploadUrl, UploadUrlRefused } from '../network/address-book';
import { retryTransient } from '../network/retry';
import type { AddressBookDeps } from './deps';

const READ_BATCH = 10_000;

/**
 * One CSV field as csv-stringify writes it (and the diff's row size counts it, address-book/store/diff.ts): quoted, its
 * quotes doubled, only when it holds a comma, a quote or a line break. Written by hand: csv-stringify took 90–175 ms per
 * 50,000-row chunk where this takes 40 ms, and the first chunk's time is the network's idle time.
 */
const field = (v: string) => (/[,"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** The chunk's rows, read from the run's delta in batches (keyset on seq), as CSV text, one piece per batch. */
export function chunkCsv(
  deps: Pick<AddressBookDeps, 'pool'>,
  runId: string,
  firstSeq: number,
  lastSeq: number,
  onBatch: (rows: number) => void,
): Readable {
  async function* pieces() {
    yield `${CSV_COLUMNS.join(',')}\n`;
    let after = firstSeq - 1;
    for (;;) {
      const rows = await additionRows(deps.pool, runId, after, lastSeq, READ_BATCH);
      if (rows.length === 0) return;
      after += rows.length;
      onBatch(rows.length);
      let text = '';
      for (const [asset, address, customerRef] of rows)
        text += `${field(asset)},${field(address)},${field(customerRef)}\n`;
      yield text;
      if (after >= lastSeq) return;
    }
  }
  return Readable.from(pieces());
}

/**
 * Uploads one chunk, exactly once: an uploaded chunk is never sent again, and the state moves planned →
 * uploading → uploaded in Postgres around the POST. A chunk found 'uploading' was interrupted by a crash; if the
 * POST had completed, the network's count shows it (`expectedIfUploaded`), so it is only sent again when the count
 * says the network never got it. Once the POST has started, cancellation (a worker shutting down) lets it finish
 * and records it, so a graceful shutdown never leaves an ambiguous chunk. An expired upload URL gets a new one.
 */
export async function uploadChunk(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string; chunkNo: number; baseCount: number; timeoutMs: number; pollMs: number },
): Promise<{ chunkNo: number; rows: number; bytes: number; sent: boolean }> {
  const { pool, network } = deps;
  const chunk = await getChunk(pool, input.runId, input.chunkNo);
  if (!chunk) throw new ValidationError('chunkNo', `run ${input.runId} has no chunk ${input.chunkNo}`);
  if (chunk.state === 'uploaded')
    return { chunkNo: input.chunkNo, rows: chunk.rows, bytes: Number(chunk.bytes), sent: false };
  await setRunPhase(pool, input.runId, 'adding');
  if (chunk.state === 'uploading') {
    // The count the network shows once this chunk and the ones before it are processed: new rows only.
    const expectedIfUploaded = input.baseCount + (await newAdditionsThrough(pool, input.runId, chunk.last_seq));
    const deadline = Date.now() + Math.min(input.timeoutMs, 5 * 60_000);
    for (;;) {
      const count = await networkTotal(network, input.vaspDid);
      if (count >= expectedIfUploaded) {
        await markChunkUploadedByCount(pool, input.runId, input.chunkNo);
        return { chunkNo: input.chunkNo, rows: chunk.rows, bytes: Number(chunk.bytes), sent: false };
      }
      if (Date.now() >= deadline) break;
      deps.heartbeat?.({ chunkNo: input.chunkNo, probing: count });
      await new Promise((r) => setTimeout(r, input.pollMs));
    }
  }
  const s = deps.settings;
  const fileName = `address-book-${input.runId}-${String(input.chunkNo).padStart(5, '0')}.csv`;
  const send = async (): Promise<{ chunkNo: number; rows: number; bytes: number; sent: boolean }> => {
    for (let urlAttempt = 1; ; urlAttempt++) {
      const uploadUrl = await requestUploadUrl(network, input.vaspDid);
      await markChunkUploading(pool, input.runId, input.chunkNo);
      let rowsRead = 0;
      const csv = chunkCsv(deps, input.runId, Number(chunk.first_seq), Number(chunk.last_seq), (n) => {
        rowsRead += n;
        deps.heartbeat?.({ chunkNo: input.chunkNo, rows: rowsRead });
      });
      try {
        const { bytes, response } = await postCsv(uploadUrl, fileName, csv, s.chunkMaxBytes, input.timeoutMs);
        if (rowsRead !== chunk.rows) {
          throw new ValidationError(
            'chunk',
            `chunk ${input.chunkNo} of run ${input.runId} read ${rowsRead} rows, planned ${chunk.rows}: the run's staging was lost`,
          );
        }
        const meta = response.uploadedFile?.metadata;
        await markChunkUploaded(
          pool,
          input.runId,
          input.chunkNo,
          meta?.key ?? response.uploadedFile?.name ?? null,
          meta?.extra?.counter ?? null,
        );
        return { chunkNo: input.chunkNo, rows: chunk.rows, bytes, sent: true };
      } catch (e) {
        csv.destroy();
        // Nothing (or a refused file) reached the network: the chunk is planned again.
        if (e instanceof UploadUrlRefused || isAppError(e)) await markChunkPlanned(pool, input.runId, input.chunkNo);
        if (e instanceof UploadUrlRefused) {
          if (urlAttempt < 3) {
            deps.logger.warn(
              { runId: input.runId, chunkNo: input.chunkNo },
              `${e.message}; requesting a new upload URL`,
            );
            continue;
          }
          throw new UpstreamRejectedError(`${e.message} (three upload URLs in a row were refused)`);
        }
        throw e;
      }
    }
  };
  // A transient failure of the POST (5xx, timeout) sends the chunk again with a new URL, within the client's policy.
  return network.transientRetry
    ? retryTransient(`upload of chunk ${input.chunkNo}`, send, network.transientRetry)
    : send();
}
