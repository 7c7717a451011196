import type { Pool } from 'pg';
import { stringify } from 'csv-stringify/sync';
import type { CursorKey } from '../lib/listing/cursor';
import { SPREADSHEET_SAFE } from '../lib/spreadsheet-csv';
import { listAuditLog, type AuditFilter } from './store';

/**
 * The audit log rows matching `filter` as CSV, oldest first, at most `max` rows (read a thousand at a time); `truncated`
 * when more matched. A cell a spreadsheet would take for a formula is made inert (lib/spreadsheet-csv.ts).
 */
export async function auditLogCsv(
  pool: Pool,
  filter: AuditFilter,
  max: number,
): Promise<{ csv: string; rows: number; truncated: boolean }> {
  const lines: string[] = [
    stringify(
      [['id', 'at', 'actor', 'actorName', 'action', 'subject', 'details', 'chain', 'seq', 'prevHash', 'hash']],
      SPREADSHEET_SAFE,
    ),
  ];
  let cursor: CursorKey | undefined;
  let rows = 0;
  do {
    const p = await listAuditLog(pool, filter, { limit: Math.min(1000, max - rows), order: 'asc', cursor });
    lines.push(
      stringify(
        p.rows.map((r) => [
          r.id,
          r.at,
          r.actor,
          r.actorName ?? '',
          r.action,
          r.subject,
          JSON.stringify(r.details),
          r.chain,
          r.seq,
          r.prevHash,
          r.hash,
        ]),
        SPREADSHEET_SAFE,
      ),
    );
    rows += p.rows.length;
    cursor = p.next;
  } while (cursor && rows < max);
  return { csv: lines.join(''), rows, truncated: cursor !== undefined };
}
