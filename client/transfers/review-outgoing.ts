/**
 * A person's decision on an outgoing transfer the policy held (status HELD): release it to be sent, or refuse it, as
 * an update of its workflow (workflows/outgoing-transfer.ts validates it and audits the decision).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { reviewOutgoingUpdate, type TransferState } from '../../workflows/outgoing-transfer.messages';

export async function reviewOutgoing(
  temporal: Client,
  id: string,
  input: { decision: 'release' | 'refuse'; reason: string },
  principal: Principal,
): Promise<TransferState> {
  const handle = temporal.workflow.getHandle(workflowIds.outgoingTransfer(id));
  try {
    return await handle.executeUpdate(reviewOutgoingUpdate, {
      args: [{ ...input, principal, actor: auditActor(principal) }],
    });
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) {
      const closed = await handle.describe().then(
        (d) => d.status.name,
        () => undefined,
      );
      if (closed) throw new ConflictError(`transfer is no longer held for review (its workflow is ${closed})`);
      throw new NotFoundError(`no transfer ${id}`, { field: 'id' });
    }
    if (e instanceof WorkflowUpdateFailedError) {
      // The validator's "field: rule" is bad input; anything else is the transfer not being held (409).
      const message = (e.cause as Error | undefined)?.message ?? e.message;
      const m = /^(\w+): (.+)$/.exec(message);
      throw m ? new ValidationError(m[1]!, m[2]!) : new ConflictError(message);
    }
    throw e;
  }
}
