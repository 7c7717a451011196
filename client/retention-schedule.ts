import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { PlatformConfig } from '../config';
import { retentionSweep } from '../workflows';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { ensureSchedule, removeSchedule, type ScheduleOutcome } from './schedules';

/**
 * The nightly data-retention sweep (RETENTION_CRON in RETENTION_TIMEZONE), created or brought up to date at every API
 * start, so a change of the retention periods reaches the next run. A night that finds the previous sweep still going
 * skips. With the cron set to `off`, the schedule is removed.
 */
export async function ensureRetentionSchedule(
  client: Client,
  config: Pick<PlatformConfig, 'retention' | 'temporal'>,
): Promise<ScheduleOutcome> {
  const { cron, timezone, webhookDays, transferPiiDays } = config.retention;
  if (!cron) return removeSchedule(client, workflowIds.retentionSchedule);
  return ensureSchedule(client, {
    scheduleId: workflowIds.retentionSchedule,
    spec: { cronExpressions: [cron], timezone },
    action: {
      type: 'startWorkflow',
      workflowType: retentionSweep,
      workflowId: workflowIds.scheduledRetentionSweep,
      taskQueue: config.temporal.taskQueue,
      args: [{ webhookDays, transferPiiDays }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
    memo: {
      purpose: `nightly data retention: webhook ids after ${webhookDays} d, transfer personal data after ${transferPiiDays} d`,
    },
  });
}
