import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { PlatformConfig } from '../config';
import { addressBookReconcile } from '../workflows';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { ensureSchedule, removeSchedule, type ScheduleOutcome } from './schedules';

/**
 * One nightly reconciliation per subsidiary (ADDRESS_BOOK_CRON in ADDRESS_BOOK_TIMEZONE), created or brought up to
 * date at every API start. Overlaps are skipped: a night's run that finds the previous one still going does not start
 * (and a run that finds an on-demand run of the VASP in progress records itself as skipped). With the cron set to
 * `off`, existing schedules are removed.
 */
export async function ensureAddressBookSchedules(
  client: Client,
  config: Pick<PlatformConfig, 'group' | 'addressBook' | 'temporal'>,
): Promise<Record<string, ScheduleOutcome>> {
  const out: Record<string, ScheduleOutcome> = {};
  for (const vaspDid of config.group.subsidiaryDids) {
    const scheduleId = workflowIds.addressBookSchedule(vaspDid);
    if (!config.addressBook.cron) {
      out[vaspDid] = await removeSchedule(client, scheduleId);
      continue;
    }
    out[vaspDid] = await ensureSchedule(client, {
      scheduleId,
      spec: { cronExpressions: [config.addressBook.cron], timezone: config.addressBook.timezone },
      action: {
        type: 'startWorkflow',
        workflowType: addressBookReconcile,
        workflowId: workflowIds.scheduledAddressBookReconcile(vaspDid),
        taskQueue: config.temporal.taskQueue,
        // Nightly runs list the whole book: they also catch what changed at the network behind our back.
        args: [{ vaspDid, trigger: 'schedule', mode: 'full' }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: `nightly address-book reconciliation of ${vaspDid}` },
    });
  }
  return out;
}
