import type { Client } from '@temporalio/client';
import type { IncomingConfig } from '../incoming/config';
import type { GroupConfig } from '../config';
import { incomingSweep } from '../workflows';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { ensureSchedule, removeSchedule, type ScheduleOutcome } from './schedules';

/** Most transfers one sweep starts; a backlog larger than that drains over the following sweeps. */
const SWEEP_LIMIT = 500;

/**
 * The sweep that starts incoming transfers no webhook started (INCOMING_SWEEP_INTERVAL), ensured at every API start so
 * changed settings reach the next run. Without a gateway, or with the interval `off`, the schedule is removed.
 */
export async function ensureIncomingSweepSchedule(
  client: Client,
  config: { group: GroupConfig; taskQueue: string },
  incoming: IncomingConfig,
): Promise<ScheduleOutcome> {
  const gatewayDid = config.group.gatewayDid;
  if (!gatewayDid || !incoming.sweepInterval) return removeSchedule(client, workflowIds.incomingSweepSchedule);
  return ensureSchedule(client, {
    scheduleId: workflowIds.incomingSweepSchedule,
    spec: { intervals: [{ every: incoming.sweepInterval }] },
    action: {
      type: 'startWorkflow',
      workflowType: incomingSweep,
      workflowId: workflowIds.scheduledIncomingSweep,
      taskQueue: config.taskQueue,
      args: [
        {
          transfer: {
            gatewayDid,
            subsidiaryDids: config.group.subsidiaryDids,
            routeDeadline: incoming.routeDeadline,
            routeGiveUpAfter: incoming.routeGiveUpAfter,
            reviewDeadline: incoming.reviewDeadline,
            pollInterval: incoming.pollInterval,
            screeningThreshold: incoming.screeningThreshold,
          },
          minAge: incoming.sweepMinAge,
          limit: SWEEP_LIMIT,
        },
      ],
    },
    memo: { purpose: `every ${incoming.sweepInterval}: start incoming transfers that no webhook started` },
  });
}
