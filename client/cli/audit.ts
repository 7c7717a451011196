import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import type { Pool } from 'pg';
import {
  exportAuditLog,
  readLines,
  verifyAuditExport,
  verifyAuditLog,
  type AuditLogReport,
  type ExportReport,
} from '../../audit/verify';
import { brokenChainError, type ChainReport } from '../../audit/chain';
import { readCheckpointKeyring, type CheckpointKeyring } from '../../audit/checkpoint-signature';
import { loadConfig } from '../../config';
import { parseDuration } from '../../lib/config-values';
import { CryptoError, ValidationError } from '../../lib/errors';
import { withCliPool } from './database';

/**
 * `tro audit …`: checks the audit chain in the orchestrator's database (DATABASE_URL) or in an export file (no database
 * needed), and exports a time range as JSON lines. A broken chain ends the command with an error naming the first
 * broken row, and a non-zero exit. The checkpoint keys (AUDIT_CHECKPOINT_KEYS, else the development key in the data
 * directory) check the signed checkpoints and sign exports' trailers; `opts` (tests) gives them instead.
 */
export function registerAuditCommands(
  program: Command,
  opts: { pool?: Pool; checkpointKeys?: CheckpointKeyring } = {},
): void {
  const audit = program.command('audit').description('the tamper-evident audit log: verify the hash chain, export it');
  const withPool = <T>(fn: (pool: Pool) => Promise<T>) => withCliPool(opts.pool, fn);
  const keys = (): CheckpointKeyring | undefined => {
    if (opts.pool || opts.checkpointKeys) return opts.checkpointKeys;
    const config = loadConfig();
    return readCheckpointKeyring(config.audit.checkpointKeys, config.dataDir);
  };

  audit
    .command('verify')
    .description(
      'check every chain from its first row, and against its signed checkpoints (or an export file offline); print the heads to anchor elsewhere',
    )
    .option('--file <export.jsonl>', 'check an export written by `audit export` instead of the database')
    .option(
      '--max-checkpoint-age <duration>',
      'fail when the newest checkpoint is older than this (e.g. 2h): checkpoints stopped, or the newest were deleted',
    )
    .action(async (o: { file?: string; maxCheckpointAge?: string }) => {
      const maxAgeMs = o.maxCheckpointAge === undefined ? undefined : parseDuration(o.maxCheckpointAge);
      if (o.maxCheckpointAge !== undefined && maxAgeMs === undefined)
        throw new ValidationError('--max-checkpoint-age', 'must be a duration such as 90m or 2h');
      const checkpointKeys = keys();
      const where = o.file ? `export ${o.file}` : 'the database';
      if (o.file) {
        const report = await verifyAuditExport(readLines(o.file), checkpointKeys);
        if (report.broken?.chain === '(export)')
          throw new CryptoError(`audit export ${o.file} is not whole: ${report.broken.problem}`, { file: o.file });
        if (report.broken) throw brokenChainError(report.broken, where);
        process.stdout.write(
          `audit chain intact in ${where}: ${report.rows} rows, ${report.heads.length} chains\n${heads(report)}${trailerLine(report)}`,
        );
        process.stdout.write(
          'An export is checked from its first row per chain: compare the heads above with a copy kept elsewhere.\n',
        );
        return;
      }
      const report = await withPool((pool) => verifyAuditLog(pool, { checkpointKeys }));
      if (report.checkpoints?.problem)
        throw new CryptoError(`audit checkpoints broken in the database: ${report.checkpoints.problem}`, {});
      if (report.broken) throw brokenChainError(report.broken, where);
      const checkpoint = checkpointLine(report, maxAgeMs);
      process.stdout.write(
        `audit chain intact in ${where}: ${report.rows} rows, ${report.heads.length} chains\n${heads(report)}${checkpoint}`,
      );
    });

  audit
    .command('export')
    .description('write the rows of a time range with their hashes as JSON lines, chain by chain in order')
    .option('--from <iso>', 'rows at or after this time (ISO 8601)')
    .option('--to <iso>', 'rows before this time (ISO 8601)')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (o: { from?: string; to?: string; out?: string }) => {
      const range = { from: time(o.from, '--from'), to: time(o.to, '--to') };
      if (range.from && range.to && range.from >= range.to)
        throw new ValidationError('--to', 'must be later than --from');
      const out = o.out ? createWriteStream(o.out, { flags: 'wx' }) : undefined;
      // Piped into a reader that stops early (head): end quietly, as other CLIs do.
      if (!out)
        process.stdout.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' ? process.exit(0) : undefined));
      // The last line is the trailer (the count and each chain's end, signed), not a row.
      let rows = -1;
      const checkpointKeys = keys();
      await withPool(async (pool) => {
        for await (const line of exportAuditLog(pool, range, checkpointKeys)) {
          rows++;
          // Wait for the reader: millions of rows are never held in memory.
          const sink = out ?? process.stdout;
          if (!sink.write(line)) await once(sink, 'drain');
        }
      });
      if (out) {
        await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
        process.stdout.write(`exported ${rows} rows to ${o.out}\n`);
      }
    });
}

function heads(report: ChainReport): string {
  return report.heads.map((h) => `  ${h.chain} seq ${h.seq} head ${h.hash}\n`).join('');
}

/** The checkpoints' line: how many, the newest and its age; a failure when there is none or it is too old. */
function checkpointLine(report: AuditLogReport, maxAgeMs: number | undefined): string {
  const c = report.checkpoints;
  if (!c) return 'checkpoints not checked: no AUDIT_CHECKPOINT_KEYS (and no development key in the data directory)\n';
  if (!c.newest) {
    if (report.rows === 0) return 'no checkpoint yet (the log is empty)\n';
    throw new CryptoError(
      'audit checkpoints missing in the database: the log has rows but no signed checkpoint (none written yet by the API, or all deleted)',
      {},
    );
  }
  const ageMs = Date.now() - Date.parse(c.newest.at);
  if (maxAgeMs !== undefined && ageMs > maxAgeMs) {
    throw new CryptoError(
      `audit checkpoints stale in the database: the newest, ${c.newest.seq} at ${c.newest.at}, is ${Math.round(ageMs / 60_000)} min old (checkpoints stopped, or the newest were deleted with the rows after them)`,
      {},
    );
  }
  return `checkpoints: ${c.count} signed, each chain reaches the newest (${c.newest.seq} at ${c.newest.at}, ${Math.round(ageMs / 60_000)} min old)\n`;
}

function trailerLine(report: ExportReport): string {
  if (report.trailer === 'verified') return 'trailer: row count and chain ends match, signature verified\n';
  if (report.trailer === 'not-checked')
    return 'trailer: row count and chain ends match; signature not checked (no AUDIT_CHECKPOINT_KEYS)\n';
  return 'trailer: row count and chain ends match; the trailer is not signed\n';
}

function time(value: string | undefined, option: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime()))
    throw new ValidationError(option, 'must be an ISO 8601 date or date-time, e.g. 2026-11-24T10:00:00Z');
  return d;
}
