/**
 * The reconciliation of counterparty reviews with the network: started on demand (audited before it starts) and as a
 * nightly Temporal Schedule at the address book's time (ADDRESS_BOOK_CRON, `off` removes it).
 */
import { ScheduleOverlapPolicy, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { PlatformConfig } from '../../config';
import { publishers } from '../../counterparties/review';
import { ConflictError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { counterpartyReviewSync } from '../../workflows';
import { recordStartRequest } from '../audited-start';
import { ensureSchedule, removeSchedule, type ScheduleOutcome } from '../schedules';

export const COUNTERPARTY_REVIEW_SYNC_ID = 'counterparty-review-sync';
export const COUNTERPARTY_REVIEW_SYNC_SCHEDULE = 'counterparty-review-sync-schedule';
const SCHEDULED_ID = 'counterparty-review-sync-nightly';

/** Audits the request, then starts the reconciliation; 409 while one started on demand runs. */
export async function startCounterpartyReviewSync(
  deps: { temporal: Client; pool: Pool; taskQueue: string; group: PlatformConfig['group'] },
  principal: Principal,
  log: { error: (details: object, message: string) => void },
): Promise<{ workflowId: string; runId: string }> {
  const workflowId = COUNTERPARTY_REVIEW_SYNC_ID;
  await recordStartRequest(deps.pool, log, {
    actor: auditActor(principal),
    action: 'counterparty.sync.requested',
    subject: workflowId,
    details: { trigger: 'api', workflowId, principal },
  });
  try {
    const handle = await deps.temporal.workflow.start(counterpartyReviewSync, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [{ trigger: 'api', vaspDids: publishers(deps.group) }],
    });
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConflictError('a reconciliation of counterparty reviews is already running', { workflowId });
    throw e;
  }
}

/** The nightly run, created or brought up to date at every API start; a night that finds the last run going skips. */
export async function ensureCounterpartyReviewSchedule(
  client: Client,
  config: Pick<PlatformConfig, 'group' | 'addressBook' | 'temporal'>,
): Promise<ScheduleOutcome> {
  if (!config.addressBook.cron) return removeSchedule(client, COUNTERPARTY_REVIEW_SYNC_SCHEDULE);
  return ensureSchedule(client, {
    scheduleId: COUNTERPARTY_REVIEW_SYNC_SCHEDULE,
    spec: { cronExpressions: [config.addressBook.cron], timezone: config.addressBook.timezone },
    action: {
      type: 'startWorkflow',
      workflowType: counterpartyReviewSync,
      workflowId: SCHEDULED_ID,
      taskQueue: config.temporal.taskQueue,
      args: [{ trigger: 'schedule', vaspDids: publishers(config.group) }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
    memo: { purpose: 'nightly reconciliation of counterparty reviews with the network' },
  });
}
