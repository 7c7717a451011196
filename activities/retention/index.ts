/**
 * The data-retention sweep's activity: what the orchestrator keeps only for a while. Webhook delivery ids matter while
 * the network may still redeliver; an outgoing transfer's sealed request (IVMS101 personal data) matters while the
 * transfer runs and is then kept for the configured period only. Record keeping proper is the network's and
 * compliance's; the rows' non-personal metadata stays.
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { ValidationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';

export interface PruneInput {
  webhookDays: number;
  transferPiiDays: number;
}

export interface PruneResult {
  webhooksDeleted: number;
  transferRequestsErased: number;
  /** Everything before these instants was in scope (ISO 8601), so a run's reach is visible in history and audit. */
  webhookCutoff: string;
  transferCutoff: string;
}

/** Rows per statement: each batch is its own short transaction, so a years-long backlog never holds long locks. */
export const RETENTION_BATCH_ROWS = 5_000;

function heartbeat(details: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    /* called outside an activity (tests calling the factory directly) */
  }
}

function cancelled(): boolean {
  try {
    return Context.current().cancellationSignal.aborted;
  } catch {
    return false;
  }
}

function wholeDays(field: keyof PruneInput, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 1) throw new ValidationError(field, 'must be a whole number of days, at least 1');
  return value as number;
}

/** Runs `batch` until it touches fewer rows than a full batch, heartbeating the running total in between. */
async function inBatches(what: string, batchRows: number, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await batch();
    total += n;
    heartbeat({ [what]: total });
    // A cancelled run stops between batches; what it did stands, and the next run continues from there.
    if (n < batchRows || cancelled()) return total;
  }
}

export function retentionActivities(deps: { pool: Pool; logger?: Logger; batchRows?: number }) {
  const batchRows = deps.batchRows ?? RETENTION_BATCH_ROWS;
  return {
    /**
     * Deletes webhook delivery ids older than `webhookDays` and erases (crypto-shreds) the sealed requests of outgoing
     * transfers created more than `transferPiiDays` ago. Idempotent: a retry or a second run finds nothing left to do.
     * Writes one audit_log row with the counts.
     */
    async pruneExpiredRecords(input: PruneInput): Promise<PruneResult> {
      const webhookDays = wholeDays('webhookDays', input.webhookDays);
      const transferPiiDays = wholeDays('transferPiiDays', input.transferPiiDays);
      // Cutoffs fixed once by the database's clock: the loops end, and a row that ages into scope mid-run waits for the
      // next night instead of being chased.
      const { rows: [cut] } = await deps.pool.query<{ webhook: Date; transfer: Date }>(
        `select now() - make_interval(days => $1) as webhook, now() - make_interval(days => $2) as transfer`,
        [webhookDays, transferPiiDays],
      );
      const webhooksDeleted = await inBatches('webhooksDeleted', batchRows, async () => {
        const { rowCount } = await deps.pool.query(
          `delete from received_webhooks where webhook_id in (
             select webhook_id from received_webhooks where received_at < $1 order by received_at limit $2 for update skip locked)`,
          [cut!.webhook, batchRows],
        );
        return rowCount ?? 0;
      });
      const transferRequestsErased = await inBatches('transferRequestsErased', batchRows, async () => {
        const { rowCount } = await deps.pool.query(
          `update outgoing_transfers t set wrapped_data_key = null, sealed_request = null, pii_erased_at = now(), updated_at = now()
           from (select id from outgoing_transfers where pii_erased_at is null and created_at < $1
                 order by created_at limit $2 for update skip locked) due
           where t.id = due.id`,
          [cut!.transfer, batchRows],
        );
        return rowCount ?? 0;
      });
      const result: PruneResult = {
        webhooksDeleted, transferRequestsErased, webhookCutoff: cut!.webhook.toISOString(), transferCutoff: cut!.transfer.toISOString(),
      };
      let workflowId: string | undefined;
      try {
        workflowId = Context.current().info.workflowExecution?.workflowId;
      } catch {
        /* outside an activity */
      }
      await deps.pool.query('insert into audit_log (actor, action, subject, details) values ($1, $2, $3, $4)', [
        'retention-sweep', 'retention.sweep', 'retention',
        JSON.stringify({ ...result, webhookDays, transferPiiDays, ...(workflowId ? { workflowId } : {}) }),
      ]);
      deps.logger?.info({ ...result }, 'retention sweep done');
      return result;
    },
  };
}
