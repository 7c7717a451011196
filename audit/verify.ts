/**
 * Checking and exporting the audit chain (lib/audit/chain.ts): the whole log in the database, a time range written as
 * JSON lines, and such a file checked offline by the same code.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Pool } from 'pg';
import { auditChainHeads, readAuditChain } from '../db/audit-log';
import { ChainChecker, type AuditChainRow, type ChainReport } from '../lib/audit/chain';
import { ValidationError } from '../lib/errors';

/**
 * Checks every chain in the database from its first row, and each chain's end against its recorded head, in one
 * consistent view (appends that commit meanwhile are not seen, and do not disturb the check).
 */
export async function verifyAuditLog(pool: Pool): Promise<ChainReport> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const checker = new ChainChecker(true);
    for await (const row of readAuditChain(client)) if (!checker.add(row)) break;
    checker.checkHeads(await auditChainHeads(client));
    return checker.report();
  } finally {
    await client.query('rollback').catch(() => undefined);
    client.release();
  }
}

/** The rows of [from, to), chain by chain in seq order, as the export writes them (one JSON object a line). */
export async function* exportAuditLog(pool: Pool, range: { from?: Date; to?: Date }): AsyncGenerator<string> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    for await (const row of readAuditChain(client, range)) yield `${JSON.stringify(row)}\n`;
  } finally {
    await client.query('rollback').catch(() => undefined);
    client.release();
  }
}

/**
 * Checks an export offline: each row's hash, and that the rows of each chain follow each other with no gap. The first
 * row of each chain in the file links to rows outside it, so compare the heads it reports with an anchored copy.
 */
export async function verifyAuditExport(lines: AsyncIterable<string>): Promise<ChainReport> {
  const checker = new ChainChecker(false);
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    if (!checker.add(parseExportLine(line, n))) break;
  }
  return checker.report();
}

export function readLines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
}

const STRING_FIELDS = ['id', 'chain', 'at', 'actor', 'action', 'subject', 'prevHash', 'hash'] as const;

function parseExportLine(line: string, n: number): AuditChainRow {
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new ValidationError(`line ${n}`, 'must be one JSON object (an audit export line)');
  }
  for (const f of STRING_FIELDS) {
    if (typeof row[f] !== 'string') throw new ValidationError(`line ${n}.${f}`, 'must be a string');
  }
  if (!Number.isSafeInteger(row.seq)) throw new ValidationError(`line ${n}.seq`, 'must be an integer');
  if (!('details' in row)) throw new ValidationError(`line ${n}.details`, 'is required');
  return row as unknown as AuditChainRow;
}
