/**
 * A network's update of a transfer to the group (the notification webhook) passed to its incoming-transfer workflow,
 * which the first update starts.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { GroupConfig } from '../../config';
import type { IncomingConfig } from '../../incoming/config';
import { isKnownToIncomingWorkflow } from '../../incoming/known-update';
import { isIncomingToGroup } from '../../lib/group';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { NetworkTransaction } from '../../network/transactions';
import { getTransferView } from '../../transfer-view/store';
import { incomingTransfer } from '../../workflows';
import { transactionUpdatedSignal } from '../../workflows/incoming-transfer.messages';

export interface IncomingUpdateDeps {
  temporal: Client;
  pool: Pool;
  group: GroupConfig;
  incoming: IncomingConfig;
  /** Without one (no worker for incoming transfers), nothing is started. */
  taskQueue?: string;
}

/**
 * A message addressed to the group (the gateway, or a subsidiary after a redirect) that this system did not send: the
 * first update about it starts its incoming-transfer workflow, every later one signals it. Signal-with-start on the
 * business id makes duplicates and races between the gateway's and the subsidiaries' webhooks harmless. 'known' when
 * the workflow already has this status, 'late' when it has finished; 'not-ours' also for the group's own deposit
 * reports (INCOMPLETE).
 */
export async function passIncomingUpdate(
  deps: IncomingUpdateDeps,
  tx: NetworkTransaction,
): Promise<'incoming' | 'known' | 'late' | 'not-ours'> {
  const { group, incoming } = deps;
  const gateway = group.gatewayDid;
  if (!gateway || !deps.taskQueue || !isIncomingToGroup(group, tx)) return 'not-ours';
  // An INCOMPLETE message is the group's own report of a deposit (tx/notify) that no originator has completed: the
  // deposit's workflow follows it, and there is nothing to route or confirm. The originator's completion (a later
  // status) starts the incoming transfer.
  if (tx.status === 'INCOMPLETE') return 'not-ours';
  // Most webhooks about an incoming transfer report the workflow's own steps back: a signal would cost a workflow task
  // and change nothing.
  const published = await getTransferView(deps.pool, workflowIds.incomingTransfer(tx.id));
  if (
    isKnownToIncomingWorkflow(
      published,
      { status: tx.status!, beneficiaryVaspDid: tx.beneficiaryVASPdid },
      group.subsidiaryDids,
    )
  )
    return 'known';
  try {
    await deps.temporal.workflow.signalWithStart(incomingTransfer, {
      taskQueue: deps.taskQueue,
      workflowId: workflowIds.incomingTransfer(tx.id),
      // A finished transfer is never started again; one whose workflow failed may be, by the next webhook about it.
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      args: [
        {
          transactionId: tx.id,
          gatewayDid: gateway,
          subsidiaryDids: group.subsidiaryDids,
          routeDeadline: incoming.routeDeadline,
          routeGiveUpAfter: incoming.routeGiveUpAfter,
          reviewDeadline: incoming.reviewDeadline,
          pollInterval: incoming.pollInterval,
          screeningThreshold: incoming.screeningThreshold,
        },
      ],
      signal: transactionUpdatedSignal,
      signalArgs: [{ status: tx.status!, beneficiaryVaspDid: tx.beneficiaryVASPdid, source: 'webhook' }],
    });
  } catch (e) {
    // The transfer's workflow finished already: a late or replayed delivery, not a new transfer.
    if (e instanceof WorkflowExecutionAlreadyStartedError) return 'late';
    throw e;
  }
  return 'incoming';
}
