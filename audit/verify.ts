/**
 * Checking and exporting the audit chain (audit/chain.ts): the whole log in the database, a time range written as
 * JSON lines, and such a file checked offline by the same code.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Pool, PoolClient } from 'pg';
import { auditChainHeads, readAuditChain } from './store';
import { hashesAt, readCheckpoints } from './checkpoint-store';
import { ChainChecker, type AuditChainRow, type ChainHead, type ChainReport } from './chain';
import {
  checkCheckpoint,
  checkTrailerSignature,
  exportTrailer,
  sameHeads,
  type AuditCheckpoint,
  type CheckpointKeyring,
  type ExportTrailer,
} from './checkpoint-signature';
import { ValidationError } from '../lib/errors';
import { openReadOnlySnapshot } from '../db/transaction';

/** What the signed checkpoints say (audit/checkpoint-signature.ts); absent when no key was given to check them. */
export interface CheckpointReport {
  count: number;
  newest?: { seq: number; at: string };
  /** The first checkpoint that is itself broken: changed, signed with a key not configured, or missing between others. */
  problem?: string;
}

export interface AuditLogReport extends ChainReport {
  checkpoints?: CheckpointReport;
}

/**
 * Checks every chain in the database from its first row, each chain's end against its recorded head and, with the
 * checkpoint keys, against the newest signed checkpoint, in one consistent view (appends that commit meanwhile are
 * not seen, and do not disturb the check).
 */
export async function verifyAuditLog(
  pool: Pool,
  opts: { checkpointKeys?: CheckpointKeyring } = {},
): Promise<AuditLogReport> {
  const { client, close } = await openReadOnlySnapshot(pool);
  try {
    const checker = new ChainChecker(true);
    for await (const row of readAuditChain(client)) if (!checker.add(row)) break;
    checker.checkHeads(await auditChainHeads(client));
    const report: AuditLogReport = checker.report();
    if (!opts.checkpointKeys) return report;
    const { checkpoints, newest } = await checkCheckpoints(client, opts.checkpointKeys);
    report.checkpoints = checkpoints;
    if (!report.broken && !checkpoints.problem && newest) {
      const broken = compareWithCheckpoint(report.heads, newest, await hashesAt(client, newest.heads));
      if (broken) report.broken = broken;
    }
    return report;
  } finally {
    await close();
  }
}

/** Every checkpoint's signature, and their numbers following each other from 1. */
async function checkCheckpoints(
  client: PoolClient,
  keyring: CheckpointKeyring,
): Promise<{ checkpoints: CheckpointReport; newest?: AuditCheckpoint }> {
  let newest: AuditCheckpoint | undefined;
  let count = 0;
  const report = (problem?: string): { checkpoints: CheckpointReport; newest?: AuditCheckpoint } => ({
    checkpoints: {
      count,
      ...(newest ? { newest: { seq: newest.seq, at: newest.at } } : {}),
      ...(problem ? { problem } : {}),
    },
    newest,
  });
  for await (const c of readCheckpoints(client)) {
    const expected = (newest?.seq ?? 0) + 1;
    if (c.seq !== expected)
      return report(
        `checkpoint${c.seq - expected > 1 ? `s ${expected} to ${c.seq - 1} are` : ` ${expected} is`} missing before checkpoint ${c.seq} (deleted)`,
      );
    const signature = checkCheckpoint(keyring, c);
    if (signature === 'unknown-key')
      return report(`checkpoint ${c.seq} is signed with key "${c.keyId}", which is not in AUDIT_CHECKPOINT_KEYS`);
    if (signature === 'invalid')
      return report(`checkpoint ${c.seq}'s signature does not verify (it was changed, or written without the key)`);
    newest = c;
    count++;
  }
  return report();
}

/**
 * Each chain the checkpoint signed must still reach its seq there, with the very row signed: otherwise rows were
 * deleted from its end (or all of them), or the chain was rewritten from some row on.
 */
function compareWithCheckpoint(
  ends: ChainHead[],
  checkpoint: AuditCheckpoint,
  hashes: Map<string, string>,
): ChainReport['broken'] {
  for (const signed of checkpoint.heads) {
    if (signed.seq === 0) continue;
    const end = ends.find((h) => h.chain === signed.chain);
    const at = `checkpoint ${checkpoint.seq} (${checkpoint.at}) signed seq ${signed.seq} ${signed.hash}`;
    if (!end)
      return {
        id: null,
        chain: signed.chain,
        seq: 1,
        problem: `the chain is missing: ${at} (the whole chain was deleted)`,
      };
    if (end.seq < signed.seq) {
      return {
        id: null,
        chain: signed.chain,
        seq: end.seq + 1,
        problem: `the chain ends at seq ${end.seq}, shorter than ${at} (rows deleted from its end)`,
      };
    }
    if (hashes.get(signed.chain) !== signed.hash) {
      return {
        id: null,
        chain: signed.chain,
        seq: signed.seq,
        problem: `its row seq ${signed.seq} is not the one ${at} (the chain was rewritten)`,
      };
    }
  }
  return undefined;
}

/**
 * The rows of [from, to), chain by chain in seq order, as the export writes them (one JSON object a line), then the
 * trailer line: the count of rows and where each chain in the file ends, signed with the checkpoint key when given.
 */
export async function* exportAuditLog(
  pool: Pool,
  range: { from?: Date; to?: Date },
  checkpointKeys?: CheckpointKeyring,
): AsyncGenerator<string> {
  const { client, close } = await openReadOnlySnapshot(pool);
  const ends = new Map<string, ChainHead>();
  let rows = 0;
  try {
    for await (const row of readAuditChain(client, range)) {
      rows++;
      ends.set(row.chain, { chain: row.chain, seq: row.seq, hash: row.hash });
      yield `${JSON.stringify(row)}\n`;
    }
  } finally {
    await close();
  }
  yield `${JSON.stringify(exportTrailer(rows, [...ends.values()], checkpointKeys))}\n`;
}

export interface ExportReport extends ChainReport {
  /** The trailer's signature: checked with the key, signed without a key to check it, or not signed. */
  trailer?: 'verified' | 'not-checked' | 'unsigned';
}

/**
 * Checks an export offline: each row's hash, that the rows of each chain follow each other with no gap, and the
 * trailer (the count of rows and each chain's last row; its signature when the checkpoint keys are given), so a file
 * cut short or added to at its end fails. The first row of each chain in the file links to rows outside it, so
 * compare the heads it reports with an anchored copy.
 */
export async function verifyAuditExport(
  lines: AsyncIterable<string>,
  checkpointKeys?: CheckpointKeyring,
): Promise<ExportReport> {
  const checker = new ChainChecker(false);
  let n = 0;
  let trailer: ExportTrailer | undefined;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    if (trailer) throw new ValidationError(`line ${n}`, 'follows the trailer line, which must be the last');
    const parsed = parseExportLine(line, n);
    if ('trailer' in parsed) {
      trailer = parsed;
      continue;
    }
    if (!checker.add(parsed)) return checker.report();
  }
  const report: ExportReport = checker.report();
  const broken = (problem: string): ExportReport => ({
    ...report,
    broken: { id: null, chain: '(export)', seq: report.rows, problem },
  });
  if (!trailer) return broken('the file has no trailer line: it was cut short (or written before exports had one)');
  if (trailer.rows !== report.rows)
    return broken(`the trailer counts ${trailer.rows} rows, the file holds ${report.rows}`);
  if (!sameHeads(trailer.heads, report.heads))
    return broken(
      "the trailer's chain ends are not where the file's chains end (rows removed from or added to the end)",
    );
  const signature = checkTrailerSignature(checkpointKeys ?? { currentKeyId: '', keys: new Map() }, trailer);
  if (signature === 'unsigned') return { ...report, trailer: 'unsigned' };
  if (!checkpointKeys) return { ...report, trailer: 'not-checked' };
  if (signature === 'unknown-key')
    return broken(`the trailer is signed with key "${trailer.keyId}", which is not in AUDIT_CHECKPOINT_KEYS`);
  if (signature === 'invalid') return broken("the trailer's signature does not verify (the trailer was rewritten)");
  return { ...report, trailer: 'verified' };
}

export function readLines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
}

const STRING_FIELDS = ['id', 'chain', 'at', 'actor', 'action', 'subject', 'prevHash', 'hash'] as const;

function parseExportLine(line: string, n: number): AuditChainRow | ExportTrailer {
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new ValidationError(`line ${n}`, 'must be one JSON object (an audit export line)');
  }
  if (row?.trailer === true) return parseTrailer(row, n);
  for (const f of STRING_FIELDS) {
    if (typeof row[f] !== 'string') throw new ValidationError(`line ${n}.${f}`, 'must be a string');
  }
  if (!Number.isSafeInteger(row.seq)) throw new ValidationError(`line ${n}.seq`, 'must be an integer');
  if (!('details' in row)) throw new ValidationError(`line ${n}.details`, 'is required');
  return row as unknown as AuditChainRow;
}

function parseTrailer(t: Record<string, unknown>, n: number): ExportTrailer {
  if (!Number.isSafeInteger(t.rows)) throw new ValidationError(`line ${n}.rows`, 'must be an integer');
  const heads = Array.isArray(t.heads) ? (t.heads as Record<string, unknown>[]) : undefined;
  if (
    !heads ||
    !heads.every((h) => typeof h?.chain === 'string' && Number.isSafeInteger(h.seq) && typeof h.hash === 'string')
  ) {
    throw new ValidationError(`line ${n}.heads`, 'must be a list of {chain, seq, hash}');
  }
  for (const f of ['keyId', 'mac'] as const) {
    if (t[f] !== undefined && typeof t[f] !== 'string') throw new ValidationError(`line ${n}.${f}`, 'must be a string');
  }
  return t as unknown as ExportTrailer;
}
