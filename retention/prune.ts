/**
 * The data-retention sweep: what the orchestrator keeps only for a while. Webhook delivery ids matter while the
 * network may still redeliver; an outgoing transfer's sealed request (IVMS101 personal data) matters while the
 * transfer runs and is then kept for the configured period only. Record keeping proper is the network's and
 * compliance's; the rows' non-personal metadata stays.
 */
import type { Pool } from 'pg';
import { ValidationError } from '../lib/errors';
import { auditActor, systemPrincipal } from '../lib/principal';
import type { Logger } from '../lib/logger';
import type { Heartbeat } from '../lib/heartbeat';
import { recordAuditEntry } from '../audit/store';
import { deleteWebhookIdsBefore, eraseTransferRequestsBefore, retentionCutoffs } from './store';
import { foldKpiChanges } from '../transfer-view/kpis-store';

export interface PruneInput {
  webhookDays: number;
  transferPiiDays: number;
}

/** What the sweep knows of the activity it runs in (activities/retention.ts); none when called directly. */
export interface PruneRun {
  heartbeat?: Heartbeat;
  /** Whether the run was asked to stop: it stops between batches. */
  cancelled?: () => boolean;
  /** The workflow it runs for, named in the audit rows. */
  workflowId?: string;
  /** Names this run across retries, so a retry finds the summary row its earlier attempt wrote. */
  idempotencyKey?: string;
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

/** Who erases and sweeps, in the audit log: `system:retention-sweep`. */
const RETENTION = systemPrincipal('retention-sweep');

function wholeDays(field: keyof PruneInput, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 1)
    throw new ValidationError(field, 'must be a whole number of days, at least 1');
  return value as number;
}

/** Runs `batch` until it touches fewer rows than a full batch, heartbeating the running total in between. */
async function inBatches(
  run: PruneRun,
  what: string,
  batchRows: number,
  batch: () => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await batch();
    total += n;
    run.heartbeat?.({ [what]: total });
    // A cancelled run stops between batches; what it did stands, and the next run continues from there.
    if (n < batchRows || run.cancelled?.()) return total;
  }
}

/**
 * Deletes webhook delivery ids older than `webhookDays` and erases (crypto-shreds) the sealed requests of outgoing
 * transfers created more than `transferPiiDays` ago. Idempotent: a retry or a second run finds nothing left to do.
 * Audits each batch of erasures with its transaction, and the sweep's counts in one row at the end.
 */
export async function pruneExpiredRecords(
  deps: { pool: Pool; logger?: Logger; batchRows?: number },
  input: PruneInput,
  run: PruneRun = {},
): Promise<PruneResult> {
  const batchRows = deps.batchRows ?? RETENTION_BATCH_ROWS;
  const webhookDays = wholeDays('webhookDays', input.webhookDays);
  const transferPiiDays = wholeDays('transferPiiDays', input.transferPiiDays);
  // Cutoffs fixed once: the loops end, and a row that ages into scope mid-run waits for the next night instead of
  // being chased.
  const cut = await retentionCutoffs(deps.pool, webhookDays, transferPiiDays);
  const webhooksDeleted = await inBatches(run, 'webhooksDeleted', batchRows, () =>
    deleteWebhookIdsBefore(deps.pool, cut.webhook, batchRows),
  );
  const { workflowId } = run;
  const by = {
    actor: auditActor(RETENTION),
    details: { transferPiiDays, principal: RETENTION, ...(workflowId ? { workflowId } : {}) },
  };
  const transferRequestsErased = await inBatches(run, 'transferRequestsErased', batchRows, () =>
    eraseTransferRequestsBefore(deps.pool, cut.transfer, batchRows, by),
  );
  // The KPIs' counts the transfer projection's triggers appended since (migration 0022), folded into the rollup so they
  // stay few when nobody reads the dashboard for a while.
  await foldKpiChanges(deps.pool);
  const result: PruneResult = {
    webhooksDeleted,
    transferRequestsErased,
    webhookCutoff: cut.webhook.toISOString(),
    transferCutoff: cut.transfer.toISOString(),
  };
  // A retried activity finds the row its earlier attempt wrote instead of adding one.
  await recordAuditEntry(
    deps.pool,
    {
      actor: auditActor(RETENTION),
      action: 'retention.sweep',
      subject: 'retention',
      details: { ...result, webhookDays, transferPiiDays, ...(workflowId ? { workflowId } : {}) },
    },
    { idempotencyKey: run.idempotencyKey },
  );
  deps.logger?.info({ ...result }, 'retention sweep done');
  return result;
}
