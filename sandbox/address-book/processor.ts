import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, rm } from 'node:fs/promises';
import { parse, type CsvError } from 'csv-parse';
import type { SandboxContext } from '../context';
import type { AddressBookOptions } from './options';
import { checkCsvRow, type Entry } from './rules';
import { userEmail } from '../auth/store';
import {
  analyzeAddresses,
  claimAbandoned,
  entryKey,
  finishUpload,
  insertRejections,
  readRejections,
  recordProgress,
  renewClaims,
  sendEmail,
  startProcessing,
  upsertBatch,
  type RejectedRow,
  type UploadCounts as Counts,
  type UploadRow,
} from './store';

/** New rows after which the address table's statistics are refreshed. */
const ANALYZE_AFTER_ROWS = 10_000;

/** Thrown inside a run when the sandbox is shutting down: the upload stays claimed and is resumed later. */
class Stopped extends Error {}

/**
 * Processes accepted CSV files in the background, in the sandbox process: a streaming parse, valid rows registered
 * in multi-row upserts of `batchSize`, invalid rows counted with their reasons, progress kept in the upload's row, and
 * a summary e-mail to the uploader at the end. Memory stays bounded by one batch whatever the file size.
 *
 * Each process claims what it works on and renews the claim (heartbeat). On start and at every beat it takes over
 * uploads whose owner stopped renewing (a crashed or stopped sandbox) and processes them again from the top; rows the interrupted run had
 * written then count as "updated".
 */
export class UploadProcessor {
  readonly instanceId = randomUUID();
  private readonly queue: string[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private heartbeat?: NodeJS.Timeout;

  constructor(
    private readonly ctx: SandboxContext,
    private readonly opts: AddressBookOptions,
  ) {}

  /**
   * Starts the heartbeat and takes over abandoned uploads, now and at every beat: a sandbox killed and restarted
   * within `abandonAfterSeconds` leaves uploads whose claim is still fresh at the new start, and they must not wait
   * for the start after that.
   */
  async start(): Promise<void> {
    const every = Math.max(1000, Math.floor((this.opts.abandonAfterSeconds * 1000) / 4));
    this.heartbeat = setInterval(() => {
      renewClaims(this.ctx.pool, this.instanceId)
        .then(() => this.takeOverAbandoned())
        .catch((e: unknown) => this.ctx.logger.warn({ err: e }, 'address upload heartbeat failed'));
    }, every);
    this.heartbeat.unref();
    await this.takeOverAbandoned();
  }

  private async takeOverAbandoned(): Promise<void> {
    if (this.stopping) return;
    for (const id of await claimAbandoned(this.ctx.pool, this.instanceId, this.opts.abandonAfterSeconds)) {
      this.ctx.logger.info({ uploadId: id }, 'resuming an abandoned address upload');
      this.enqueue(id);
    }
  }

  /** Stops taking work, interrupts running uploads between batches and waits for them. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.queue.length = 0;
    await Promise.allSettled([...this.running.values()]);
  }

  enqueue(id: string): void {
    if (this.stopping) return;
    this.queue.push(id);
    setImmediate(() => this.pump());
  }

  private pump(): void {
    while (!this.stopping && this.running.size < this.opts.processingConcurrency && this.queue.length) {
      const id = this.queue.shift()!;
      if (this.running.has(id)) continue;
      const run = this.process(id)
        .catch((e: unknown) => this.ctx.logger.error({ err: e, uploadId: id }, 'address upload processing failed'))
        .finally(() => {
          this.running.delete(id);
          this.pump();
        });
      this.running.set(id, run);
    }
  }

  private async process(id: string): Promise<void> {
    const { pool } = this.ctx;
    const upload = await startProcessing(pool, id, this.instanceId);
    if (!upload) return;

    const counts: Counts = { rowsRead: 0, registered: 0, updated: 0, rejected: 0 };
    let error: string | null = null;
    try {
      await access(upload.spool_path);
      error = await this.run(upload, counts);
    } catch (e) {
      if (e instanceof Stopped) return;
      error =
        (e as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'the uploaded file is gone from the spool directory'
          : 'processing failed';
      this.ctx.logger.error({ err: e, uploadId: id }, 'address upload processing failed');
    }
    const status = error ? 'failed' : 'completed';
    await finishUpload(pool, id, status, error, counts);
    await rm(upload.spool_path, { force: true });
    // After a big load the planner's statistics are stale and would turn listings into sorts of the whole book.
    if (counts.registered > ANALYZE_AFTER_ROWS) await analyzeAddresses(pool).catch(() => undefined);
    await this.sendSummary(upload, status, counts, error);
  }

  /** Parses and registers the file. Returns an error message when the file cannot be read to its end. */
  private async run(upload: UploadRow, counts: Counts): Promise<string | null> {
    const runId = randomUUID();
    const batch = new Map<string, { entry: Entry; line: number }>();
    let rejected: RejectedRow[] = [];
    let stored = 0;

    const reject = (r: RejectedRow) => {
      counts.rejected += 1;
      if (stored + rejected.length < this.opts.maxStoredRejections) rejected.push(r);
    };

    // Writes one batch while the parser reads the next: the database and the parser work at the same time, and
    // batches still reach the database one after the other (a later batch's duplicates need the earlier one written).
    const write = async (entries: { entry: Entry; line: number }[], rows: RejectedRow[]) => {
      if (entries.length) {
        const outcome = await upsertBatch(
          this.ctx.pool,
          upload.vasp_did,
          entries.map((e) => e.entry),
          runId,
        );
        for (const { entry, line } of entries) {
          const what = outcome.get(entryKey(entry.asset, entry.address));
          if (what === 'registered') counts.registered += 1;
          else if (what === 'updated') counts.updated += 1;
          else {
            counts.rejected += 1;
            if (stored + rows.length < this.opts.maxStoredRejections) {
              rows.push({ line, ...entry, reason: 'duplicate in file: same asset and address as an earlier row' });
            }
          }
        }
      }
      await insertRejections(this.ctx.pool, upload.id, rows);
      stored += rows.length;
      await recordProgress(this.ctx.pool, upload.id, counts);
    };
    let writing: Promise<void> | undefined;
    const flush = async (last = false) => {
      if (this.stopping) throw new Stopped();
      const entries = [...batch.values()];
      batch.clear();
      const rows = rejected;
      rejected = [];
      if (writing) await writing;
      writing = write(entries, rows);
      writing.catch(() => undefined); // a failure surfaces at the next flush
      if (last) await writing;
    };

    const parser = parse({
      bom: true,
      from_line: 2, // the header, checked when the file was accepted
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      max_record_size: 64 * 1024,
      info: true,
      on_skip: (err: CsvError | undefined, raw: string | undefined) => {
        counts.rowsRead += 1;
        const line = typeof err?.lines === 'number' ? err.lines : parser.info.lines;
        reject({
          line,
          asset: '',
          address: (raw ?? '').trim(),
          customerRef: '',
          reason: `malformed CSV: ${err?.message ?? 'unreadable row'}`,
        });
      },
    });
    const source = createReadStream(upload.spool_path);
    source.on('error', (e) => parser.destroy(e));
    source.pipe(parser);

    let failure: string | null = null;
    try {
      for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        counts.rowsRead += 1;
        const line = item.info.lines;
        const checked = checkCsvRow(item.record);
        if ('reason' in checked) {
          const [asset = '', address = '', customerRef = ''] = item.record;
          reject({
            line,
            asset: asset.trim(),
            address: address.trim(),
            customerRef: customerRef.trim(),
            reason: checked.reason,
          });
        } else {
          const key = entryKey(checked.entry.asset, checked.entry.address);
          const first = batch.get(key);
          if (first)
            reject({
              line,
              ...checked.entry,
              reason: `duplicate in file: same asset and address as line ${first.line}`,
            });
          else batch.set(key, { entry: checked.entry, line });
        }
        if (batch.size >= this.opts.batchSize) await flush();
      }
    } catch (e) {
      if (e instanceof Stopped) throw e;
      const csv = e as CsvError;
      if (typeof csv.code !== 'string' || !csv.code.startsWith('CSV_')) throw e;
      // A fault the parser cannot skip (an unclosed quote, a runaway record) ends the file here.
      const line = typeof csv.lines === 'number' ? csv.lines : parser.info.lines;
      failure = `malformed CSV at line ${line}: ${csv.message}; the rest of the file was not read`;
    } finally {
      source.destroy();
      // A run cut short still lets the batch being written finish before the upload's row is updated.
      await writing?.catch(() => undefined);
    }
    await flush(true);
    return failure;
  }

  private async sendSummary(
    upload: UploadRow,
    status: 'completed' | 'failed',
    counts: Counts,
    error: string | null,
  ): Promise<void> {
    const to = await userEmail(this.ctx.pool, upload.user_did);
    if (!to) return;
    const rejectedRows = await readRejections(this.ctx.pool, upload.id, this.opts.maxRejectionsInEmail);
    const added = counts.registered + counts.updated;
    const subject =
      status === 'completed'
        ? `Address list ${upload.file_name} processed: ${added} addresses registered, ${counts.rejected} rows rejected`
        : `Address list ${upload.file_name} could not be processed completely`;
    const lines = [
      `Your address list "${upload.file_name}" for VASP ${upload.vasp_did} (upload ${upload.id}, number ${upload.counter}) ` +
        (status === 'completed' ? 'has been processed.' : `stopped with an error: ${error}.`),
      '',
      `Rows read:           ${counts.rowsRead}`,
      `Addresses added:     ${counts.registered}`,
      `Addresses updated:   ${counts.updated} (already in the address book; customerRef refreshed)`,
      `Rows rejected:       ${counts.rejected}`,
    ];
    if (rejectedRows.length) {
      lines.push(
        '',
        counts.rejected > rejectedRows.length ? `Rejected rows (first ${rejectedRows.length}):` : 'Rejected rows:',
      );
      for (const r of rejectedRows)
        lines.push(`  line ${r.line}: ${r.reason}${r.address ? ` (${r.asset ? `${r.asset} ` : ''}${r.address})` : ''}`);
    }
    await sendEmail(this.ctx.pool, to, subject, `${lines.join('\n')}\n`, {
      kind: 'addressListSummary',
      uploadId: upload.id,
      vaspDID: upload.vasp_did,
      userDID: upload.user_did,
      fileName: upload.file_name,
      counter: upload.counter,
      status,
      error,
      counts,
      rejectedRows,
      rejectedRowsTruncated: counts.rejected > rejectedRows.length,
    });
  }
}
