/**
 * What the retention sweep deletes or erases: notification-webhook delivery ids past their deduplication window, and
 * the sealed requests (personal data) of old outgoing transfers, crypto-shredded. Each batch is its own statement.
 */
import type { Pool } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';

/** Cutoffs fixed once by the database's clock, `webhookDays` and `transferPiiDays` ago. */
export async function retentionCutoffs(
  pool: Pool,
  webhookDays: number,
  transferPiiDays: number,
): Promise<{ webhook: Date; transfer: Date }> {
  const {
    rows: [cut],
  } = await pool.query<{ webhook: Date; transfer: Date }>(
    `select now() - make_interval(days => $1) as webhook, now() - make_interval(days => $2) as transfer`,
    [webhookDays, transferPiiDays],
  );
  return cut!;
}

/** Deletes up to `limit` delivery ids received before `cutoff`; answers how many. */
export async function deleteWebhookIdsBefore(pool: Pool, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await pool.query(
    `delete from received_webhooks where webhook_id in (
       select webhook_id from received_webhooks where received_at < $1 order by received_at limit $2 for update skip locked)`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}

/**
 * Erases (data key and ciphertext set to NULL) the sealed requests of up to `limit` outgoing transfers created before
 * `cutoff`; the non-personal metadata stays. A batch that erased any is audited (`retention.erase`, the transfers' ids)
 * in its own transaction; a retried sweep finds them erased and writes nothing again. Answers how many.
 */
export async function eraseTransferRequestsBefore(
  pool: Pool,
  cutoff: Date,
  limit: number,
  audit: { actor: string; details: Record<string, unknown> },
): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `update outgoing_transfers t set wrapped_data_key = null, sealed_request = null, pii_entries = null, pii_erased_at = now(), updated_at = now()
       from (select id from outgoing_transfers where pii_erased_at is null and created_at < $1
             order by created_at limit $2 for update skip locked) due
       where t.id = due.id
       returning t.id`,
      [cutoff, limit],
    );
    if (rows.length > 0) {
      await appendAuditEntry(tx, {
        actor: audit.actor,
        action: 'retention.erase',
        subject: 'outgoing-transfers',
        details: {
          ...audit.details,
          cutoff: cutoff.toISOString(),
          erased: rows.length,
          transferIds: rows.map((r) => r.id).sort(),
        },
      });
    }
    return rows.length;
  });
}
