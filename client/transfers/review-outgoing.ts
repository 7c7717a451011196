/**
 * A person's decision on an outgoing transfer the policy held (status HELD): release it to be sent, or refuse it, as
 * an update of its workflow (workflows/outgoing-transfer.ts validates it and audits the decision).
 */
import type { Client } from '@temporalio/client';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { executePersonUpdate } from '../person-update';
import { reviewOutgoingUpdate, type TransferState } from '../../workflows/outgoing-transfer.messages';

export async function reviewOutgoing(
  temporal: Client,
  id: string,
  input: { decision: 'release' | 'refuse'; reason: string },
  principal: Principal,
): Promise<TransferState> {
  return executePersonUpdate(
    temporal.workflow.getHandle(workflowIds.outgoingTransfer(id)),
    reviewOutgoingUpdate,
    { ...input, principal, actor: auditActor(principal) },
    {
      closed: (status) => `transfer is no longer held for review (its workflow is ${status})`,
      notFound: `no transfer ${id}`,
    },
  );
}
