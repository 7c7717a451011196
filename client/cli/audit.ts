import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import type { Pool } from 'pg';
import { exportAuditLog, readLines, verifyAuditExport, verifyAuditLog } from '../../audit/verify';
import { brokenChainError, type ChainReport } from '../../lib/audit/chain';
import { ValidationError } from '../../lib/errors';
import { withCliPool } from './database';

/**
 * `tro audit …`: checks the audit chain in the orchestrator's database (DATABASE_URL) or in an export file (no database
 * needed), and exports a time range as JSON lines. A broken chain ends the command with an error naming the first
 * broken row, and a non-zero exit.
 */
export function registerAuditCommands(program: Command, opts: { pool?: Pool } = {}): void {
  const audit = program.command('audit').description('the tamper-evident audit log: verify the hash chain, export it');
  const withPool = <T>(fn: (pool: Pool) => Promise<T>) => withCliPool(opts.pool, fn);

  audit
    .command('verify')
    .description('check every chain from its first row (or an export file offline) and print the heads to anchor elsewhere')
    .option('--file <export.jsonl>', 'check an export written by `audit export` instead of the database')
    .action(async (o: { file?: string }) => {
      const report = o.file ? await verifyAuditExport(readLines(o.file)) : await withPool(verifyAuditLog);
      const where = o.file ? `export ${o.file}` : 'the database';
      if (report.broken) throw brokenChainError(report.broken, where);
      process.stdout.write(`audit chain intact in ${where}: ${report.rows} rows, ${report.heads.length} chains\n${heads(report)}`);
      if (o.file) {
        process.stdout.write('An export is checked from its first row per chain: compare the heads above with a copy kept elsewhere.\n');
      }
    });

  audit
    .command('export')
    .description('write the rows of a time range with their hashes as JSON lines, chain by chain in order')
    .option('--from <iso>', 'rows at or after this time (ISO 8601)')
    .option('--to <iso>', 'rows before this time (ISO 8601)')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (o: { from?: string; to?: string; out?: string }) => {
      const range = { from: time(o.from, '--from'), to: time(o.to, '--to') };
      if (range.from && range.to && range.from >= range.to) throw new ValidationError('--to', 'must be later than --from');
      const out = o.out ? createWriteStream(o.out, { flags: 'wx' }) : undefined;
      // Piped into a reader that stops early (head): end quietly, as other CLIs do.
      if (!out) process.stdout.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' ? process.exit(0) : undefined));
      let rows = 0;
      await withPool(async (pool) => {
        for await (const line of exportAuditLog(pool, range)) {
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

function time(value: string | undefined, option: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime())) throw new ValidationError(option, 'must be an ISO 8601 date or date-time, e.g. 2026-11-24T10:00:00Z');
  return d;
}
