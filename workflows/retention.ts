import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PruneInput, PruneResult } from '../activities/retention';

// A years-long backlog can take a while; the heartbeat between batches, not the overall timeout, tells a stuck worker
// from a busy one. A retry resumes where the last attempt stopped, since the activity is idempotent.
const { pruneExpiredRecords } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 5 },
});

export type RetentionSweepInput = PruneInput;
export type RetentionSweepResult = PruneResult;

/**
 * The nightly data-retention sweep (RETENTION_CRON): drops expired webhook delivery ids and erases the personal data
 * of old outgoing transfers. The periods come as arguments from the schedule, so a change of settings takes effect
 * at the next API start without touching running histories.
 */
export async function retentionSweep(input: RetentionSweepInput): Promise<RetentionSweepResult> {
  return pruneExpiredRecords({ webhookDays: input.webhookDays, transferPiiDays: input.transferPiiDays });
}
