import { ParentClosePolicy, proxyActivities, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { incomingTransfer, type IncomingTransferInput } from './incoming-transfer';

const { listUnansweredIncoming } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

export interface IncomingSweepInput {
  /** The settings every incoming-transfer workflow starts with, as the webhook would start it. */
  transfer: Omit<IncomingTransferInput, 'transactionId'>;
  minAge: string;
  limit: number;
}

export interface IncomingSweepResult {
  listed: number;
  started: string[];
}

/** Starts in groups this large: each start waits for the server, one at a time would make a long sweep slow. */
const START_BATCH = 50;

/**
 * The backstop for lost webhooks (INCOMING_SWEEP_INTERVAL): lists the network's incoming transactions that still wait
 * for the group's answer and starts the incoming-transfer workflow of each that has none. The business id makes this
 * idempotent: a transfer whose workflow runs, or finished, is not started again; one whose workflow failed is.
 * Started workflows outlive the sweep.
 */
export async function incomingSweep(input: IncomingSweepInput): Promise<IncomingSweepResult> {
  const ids = await listUnansweredIncoming({
    gatewayDid: input.transfer.gatewayDid,
    subsidiaryDids: input.transfer.subsidiaryDids,
    minAge: input.minAge,
    limit: input.limit,
  });
  const started: string[] = [];
  const start = async (transactionId: string) => {
    try {
      await startChild(incomingTransfer, {
        workflowId: workflowIds.incomingTransfer(transactionId),
        args: [{ ...input.transfer, transactionId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
      started.push(transactionId);
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    }
  };
  for (let i = 0; i < ids.length; i += START_BATCH) await Promise.all(ids.slice(i, i + START_BATCH).map(start));
  return { listed: ids.length, started };
}
