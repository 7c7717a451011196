import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { parse } from 'csv-parse';
import { stringify, type Stringifier } from 'csv-stringify';
import { checkEntry, entryKey, type RegistryEntry } from '../../address-book/entry';
import type { ReconcileProgress, ReconcileReport } from '../../address-book/types';
import { loadConfig } from '../../config';
import { SPREADSHEET_SAFE } from '../../lib/spreadsheet-csv';
import { api, ApiError, apiOptions, apiTarget, type ApiTarget } from './api-client';

/** `tro addresses …`: import a CSV into the group's registry, reconcile a subsidiary's book at the network. */
export function registerAddressCommands(program: Command): void {
  const addresses = program
    .command('addresses')
    .description("the group's address registry and its reconciliation with the network");

  apiOptions(
    addresses
      .command('import')
      .description('stream a CSV (asset,address,customerRef[,vaspDID][,tag]) of any size into the registry')
      .argument('<file>', 'the CSV file; header row required')
      .option('--vasp <did>', 'owning subsidiary for rows without a vaspDID column value')
      .option('--errors <path>', 'where to write the rejected rows (default: <file>.rejected.csv)')
      .option('--batch <n>', 'entries per upsert request', (v) => Number(v), 5000),
  ).action(
    async (file: string, opts: { vasp?: string; errors?: string; batch: number; api?: string; token?: string }) => {
      const summary = await importAddresses({
        file,
        vaspDid: opts.vasp,
        errorsPath: opts.errors,
        batchSize: opts.batch,
        api: apiTarget(opts),
      });
      process.stdout.write(
        `${summary.rows} rows read: ${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged, ` +
          `${summary.rejected} rejected${summary.rejected ? ` (see ${summary.errorsPath})` : ''}\n`,
      );
    },
  );

  apiOptions(
    addresses
      .command('reconcile')
      .description("reconcile a subsidiary's address book at the network now")
      .requiredOption('--vasp <did>', 'the subsidiary VASP')
      .option('--follow', 'follow the run with a progress bar until it ends')
      .option('--full', 'list the whole book at the network instead of starting from the last verified result'),
  ).action(async (opts: { vasp: string; follow?: boolean; full?: boolean; api?: string; token?: string }) => {
    const base = apiTarget(opts);
    const started = await startReconcile(base, opts.vasp, opts.full ? 'full' : 'auto');
    process.stdout.write(`${started.already ? 'already running' : 'started'}: ${started.workflowId}\n`);
    if (!opts.follow) return;
    const report = await followReconcile(base, opts.vasp, started.workflowId);
    process.stdout.write(`${formatReport(report)}\n`);
    if (report.status === 'failed') process.exitCode = 1;
  });

  apiOptions(
    addresses
      .command('reports')
      .description("a subsidiary's latest reconciliation reports")
      .requiredOption('--vasp <did>', 'the subsidiary VASP')
      .option('--limit <n>', 'how many', (v) => Number(v), 5),
  ).action(async (opts: { vasp: string; limit: number; api?: string; token?: string }) => {
    const r = await api<{ reports: ReconcileReport[] }>(
      apiTarget(opts),
      'GET',
      `/v1/address-book/${encodeURIComponent(opts.vasp)}/reports?limit=${opts.limit}`,
    );
    for (const report of r.reports) process.stdout.write(`${formatReport(report)}\n`);
  });
}

export interface ImportOptions {
  file: string;
  vaspDid?: string;
  errorsPath?: string;
  batchSize?: number;
  api: ApiTarget;
  /** Show a progress bar (default: when stderr is a terminal). */
  progress?: boolean;
}

export interface ImportSummary {
  rows: number;
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  errorsPath: string;
}

interface Pending {
  line: number;
  entry: RegistryEntry;
}

const REPORT_COLUMNS = ['line', 'asset', 'address', 'customerRef', 'vaspDID', 'field', 'reason'];

/**
 * Streams the CSV through csv-parse (never the whole file in memory), checks every row with the same rules as the
 * API, and upserts the good rows in batches. A rejected row (bad asset, empty address, unknown VASP, a duplicate of an
 * earlier row of the file, anything the API refuses) goes to the error report with its line and reason; the import
 * goes on. Duplicates are found with a set of 96-bit key digests (about 60 bytes a row, not the rows themselves).
 */
export async function importAddresses(opts: ImportOptions): Promise<ImportSummary> {
  const batchSize = Math.max(1, Math.min(opts.batchSize ?? 5000, 10_000));
  const errorsPath = opts.errorsPath ?? `${opts.file}.rejected.csv`;
  const size = statSync(opts.file).size;
  const input = createReadStream(opts.file);
  const parser = input.pipe(
    parse({
      columns: (h: string[]) => h.map((c) => c.trim()),
      bom: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
    }),
  );
  input.on('error', (e) => parser.destroy(e));

  let group: Set<string> | undefined;
  try {
    const dids = loadConfig().group.subsidiaryDids;
    if (dids.length > 0) group = new Set(dids);
  } catch {
    /* the API decides */
  }
  const unknownVasps = new Map<string, string>();
  const seen = new Set<string>();
  const summary: ImportSummary = { rows: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0, errorsPath };

  let report: Stringifier | undefined;
  let reportFile: WriteStream | undefined;
  const rejectRow = (
    line: number,
    row: Record<string, string | undefined> | RegistryEntry,
    field: string,
    reason: string,
  ) => {
    if (!report) {
      report = stringify({ header: true, columns: REPORT_COLUMNS, ...SPREADSHEET_SAFE });
      reportFile = createWriteStream(errorsPath);
      report.pipe(reportFile);
    }
    const r = row as Record<string, string | undefined>;
    const address = 'tag' in row && row.tag ? `${row.address}:${row.tag}` : (r.address ?? '');
    report.write([line, r.asset ?? '', address, r.customerRef ?? '', r.vaspDID ?? '', field, reason]);
    summary.rejected += 1;
  };

  const bar =
    (opts.progress ?? process.stderr.isTTY)
      ? new SingleBar({
          format: 'import [{bar}] {percentage}% | {rows} rows | {rejected} rejected',
          stream: process.stderr,
          hideCursor: true,
        })
      : undefined;
  bar?.start(size, 0, { rows: 0, rejected: 0 });

  let batch: Pending[] = [];
  const flush = async () => {
    let pending = batch;
    batch = [];
    while (pending.length > 0) {
      try {
        const r = await putWithRetry(
          opts.api,
          pending.map((p) => p.entry),
        );
        summary.inserted += r.inserted;
        summary.updated += r.updated;
        summary.unchanged += r.unchanged;
        pending = [];
      } catch (e) {
        if (!(e instanceof ApiError) || (e.status !== 400 && e.status !== 409) || e.body.error?.index === undefined)
          throw e;
        // The API names the first entry it refuses: report it, send the rest again. A VASP outside the group takes
        // all its rows of the batch with it, and is remembered for the rest of the file.
        const index = e.body.error.index;
        const message = e.body.error.message ?? `HTTP ${e.status}`;
        const refused = pending[index]!;
        const field = (e.body.error.field ?? '').replace(/^addresses\[\d+\]\.?/, '') || '(row)';
        if (e.status === 400 && field === 'vaspDID') {
          unknownVasps.set(refused.entry.vaspDID, message.replace(/^addresses\[\d+\]\.vaspDID: /, ''));
          for (const p of pending.filter((x) => x.entry.vaspDID === refused.entry.vaspDID))
            rejectRow(p.line, p.entry, 'vaspDID', unknownVasps.get(p.entry.vaspDID)!);
          pending = pending.filter((x) => x.entry.vaspDID !== refused.entry.vaspDID);
        } else {
          rejectRow(refused.line, refused.entry, field, message.replace(/^addresses\[\d+\](\.\w+)?: /, ''));
          pending = pending.filter((_, i) => i !== index);
        }
      }
    }
    bar?.update(input.bytesRead, { rows: summary.rows, rejected: summary.rejected });
  };

  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Record<string, string | undefined>;
      info: { lines: number };
    }>) {
      summary.rows += 1;
      const line = info.lines;
      const vasp = record.vaspDID || record.vasp_did || record.vaspDid || opts.vaspDid;
      const row = { ...record, vaspDID: vasp, tag: record.tag || record.memo || undefined };
      if (!vasp) {
        rejectRow(line, row, 'vaspDID', 'no vaspDID in the row and no --vasp');
        continue;
      }
      const known = unknownVasps.get(vasp);
      if (known) {
        rejectRow(line, row, 'vaspDID', known);
        continue;
      }
      const checked = checkEntry(row, group ?? new Set([vasp]));
      if (!checked.ok) {
        rejectRow(line, row, checked.problem.field, checked.problem.rule);
        continue;
      }
      const digest = createHash('sha256').update(entryKey(checked.value)).digest('base64').slice(0, 16);
      if (seen.has(digest)) {
        rejectRow(
          line,
          checked.value,
          '(row)',
          'duplicate of an earlier row of the file (same asset, address and tag)',
        );
        continue;
      }
      seen.add(digest);
      batch.push({ line, entry: checked.value });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  } finally {
    bar?.update(size, { rows: summary.rows, rejected: summary.rejected });
    bar?.stop();
    if (report) {
      const done = new Promise<void>((resolve) => reportFile!.on('finish', () => resolve()));
      report.end();
      await done;
    }
  }
  return summary;
}

/** An upsert batch is safe to send again: network failures, 5xx and 429 are retried, four times at most. */
function putWithRetry(base: ApiTarget, entries: RegistryEntry[]) {
  return api<{ inserted: number; updated: number; unchanged: number }>(
    base,
    'PUT',
    '/v1/addresses',
    {
      addresses: entries.map((e) => ({
        asset: e.asset,
        address: e.address,
        tag: e.tag || undefined,
        customerRef: e.customerRef,
        vaspDID: e.vaspDID,
      })),
    },
    { retries: 4 },
  );
}

/** Starts a run; when one is already running for the VASP, returns that one (so `--follow` follows it). */
export async function startReconcile(
  base: ApiTarget,
  vaspDid: string,
  mode: 'auto' | 'full' = 'auto',
): Promise<{ workflowId: string; already: boolean }> {
  try {
    const r = await api<{ workflowId: string }>(
      base,
      'POST',
      `/v1/address-book/${encodeURIComponent(vaspDid)}/reconcile`,
      { trigger: 'cli', mode },
    );
    return { workflowId: r.workflowId, already: false };
  } catch (e) {
    if (e instanceof ApiError && e.status === 409 && e.body.error?.workflowId)
      return { workflowId: e.body.error.workflowId, already: true };
    throw e;
  }
}

/** Polls the run's progress query through the API and draws it (when stderr is a terminal) until the run ends. */
export async function followReconcile(
  base: ApiTarget,
  vaspDid: string,
  workflowId: string,
  opts: { intervalMs?: number; progress?: boolean; onProgress?: (p: ReconcileProgress) => void } = {},
): Promise<ReconcileReport> {
  const bar =
    (opts.progress ?? process.stderr.isTTY)
      ? new SingleBar({
          format: 'reconcile [{bar}] {value}/{total} rows | {phase} | chunks {chunks}',
          stream: process.stderr,
          hideCursor: true,
        })
      : undefined;
  let started = false;
  try {
    for (;;) {
      const r = await api<{ status: string; progress?: ReconcileProgress; report?: ReconcileReport; error?: string }>(
        base,
        'GET',
        `/v1/address-book/${encodeURIComponent(vaspDid)}/reconcile/${encodeURIComponent(workflowId)}`,
      );
      if (r.progress) {
        opts.onProgress?.(r.progress);
        const p = r.progress;
        const payload = { phase: p.phase, chunks: p.chunksTotal ? `${p.chunksDone}/${p.chunksTotal}` : '-' };
        if (bar && !started) {
          bar.start(p.rowsTotal ?? 0, p.rowsDone, payload);
          started = true;
        }
        bar?.setTotal(p.rowsTotal ?? 0);
        bar?.update(p.rowsDone, payload);
      }
      if (r.report) return r.report;
      if (r.status !== 'RUNNING') {
        return {
          runId: '',
          vaspDid,
          trigger: 'cli',
          status: 'failed',
          startedAt: '',
          finishedAt: '',
          durationMs: 0,
          added: 0,
          updated: 0,
          removed: 0,
          rejected: 0,
          chunks: 0,
          phases: {},
          error: r.error ?? r.status,
        };
      }
      await new Promise((res) => setTimeout(res, opts.intervalMs ?? 500));
    }
  } finally {
    if (started) bar?.stop();
  }
}

export function formatReport(r: ReconcileReport): string {
  const head = `${r.status} ${r.vaspDid} run ${r.runId || '-'} (${r.trigger}${r.mode ? `, ${r.mode}` : ''}) in ${(r.durationMs / 1000).toFixed(1)} s`;
  if (r.status !== 'succeeded') return `${head}: ${r.error ?? ''}`;
  return `${head}: +${r.added} ~${r.updated} -${r.removed}, ${r.rejected} rejected, ${r.chunks} chunks (${r.method}, verified by ${r.verifiedBy ?? '-'})`;
}
