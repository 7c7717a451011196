import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { DEFAULT_KEY_ROTATION_PERIOD, type PlatformConfig } from '../config';
import { VaspDid } from '../lib/temporal/search-attributes';
import { scheduledKeyRotation } from '../workflows';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { ensureSchedule, removeSchedule, type ScheduleOutcome } from './schedules';

/**
 * One key-rotation schedule per VASP of the group (the gateway and every subsidiary), every KEY_ROTATION_PERIOD,
 * created or brought up to date at every API start. Each run starts the VASP's rotation under its per-VASP workflow id,
 * so a scheduled rotation never overlaps one requested through the API (it is skipped instead). With the period set to
 * `off`, existing schedules are removed.
 */
export async function ensureKeyRotationSchedules(
  client: Client,
  config: Pick<PlatformConfig, 'group' | 'keyRotationPeriodMs' | 'temporal'>,
): Promise<Record<string, ScheduleOutcome>> {
  const out: Record<string, ScheduleOutcome> = {};
  const vasps = [...(config.group.gatewayDid ? [config.group.gatewayDid] : []), ...config.group.subsidiaryDids];
  const periodMs = config.keyRotationPeriodMs ?? parseDays(DEFAULT_KEY_ROTATION_PERIOD);
  for (const vaspDid of vasps) {
    const scheduleId = workflowIds.keyRotationSchedule(vaspDid);
    if (periodMs === 0) {
      out[vaspDid] = await removeSchedule(client, scheduleId);
      continue;
    }
    out[vaspDid] = await ensureSchedule(client, {
      scheduleId,
      spec: { intervals: [{ every: periodMs }] },
      action: {
        type: 'startWorkflow',
        workflowType: scheduledKeyRotation,
        workflowId: workflowIds.scheduledKeyRotation(vaspDid),
        taskQueue: config.temporal.taskQueue,
        args: [{ vaspDid }],
        typedSearchAttributes: [{ key: VaspDid, value: vaspDid }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: `rotation of the pii_didkey of ${vaspDid} every ${Math.round(periodMs / 3_600_000)} h` },
    });
  }
  return out;
}

function parseDays(period: string): number {
  return Number(period.replace(/d$/, '')) * 86_400_000;
}
