import type { Pool } from 'pg';
import { recordAuditEntry, type AuditEntry } from '../audit/store';
import { AuditUnavailableError } from '../lib/errors';

/**
 * Records a request to start something (a key rotation, a reconciliation) before it is started: the audit log then
 * holds every start, including one whose process dies right after it. When the row cannot be written nothing may be
 * started: AuditUnavailableError answers 503, worth retrying once the database answers. A request refused after its
 * row is written (a run started meanwhile) keeps its row: it records a request, not a run.
 */
export async function recordStartRequest(
  pool: Pool,
  log: { error: (details: object, message: string) => void },
  entry: AuditEntry,
): Promise<void> {
  try {
    await recordAuditEntry(pool, entry);
  } catch (e) {
    log.error(
      { err: e, action: entry.action, subject: entry.subject },
      'a request could not be audited, so nothing was started',
    );
    throw new AuditUnavailableError(
      'the audit log could not record this request, so nothing was started; try again shortly',
      { action: entry.action },
    );
  }
}
