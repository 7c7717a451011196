/**
 * A person's side of an incoming transfer, for the API: its status, routing one nobody owns and deciding one held for
 * review, as queries and updates of its workflow (workflows/incoming-transfer.ts validates each update).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import {
  decideUpdate,
  incomingStatusQuery,
  routeUpdate,
  type IncomingStatus,
} from '../../workflows/incoming-transfer.messages';

/**
 * A validator's refusal into the API's errors: "field: rule" is bad input (400), anything else is the transfer not
 * being in the state the request needs (409).
 */
function updateRefusal(e: WorkflowUpdateFailedError): Error {
  const message = (e.cause as Error | undefined)?.message ?? e.message;
  const m = /^(\w+): (.+)$/.exec(message);
  return m ? new ValidationError(m[1]!, m[2]!) : new ConflictError(message);
}

async function update<A>(
  temporal: Client,
  id: string,
  def: typeof routeUpdate | typeof decideUpdate,
  arg: A,
): Promise<IncomingStatus> {
  const handle = temporal.workflow.getHandle(workflowIds.incomingTransfer(id));
  try {
    return await handle.executeUpdate(def as never, { args: [arg] as never });
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) {
      // A finished workflow takes no update either: that is a transfer already decided (or closed), not an unknown one.
      const closed = await handle.describe().then(
        (d) => d.status.name,
        () => undefined,
      );
      if (closed)
        throw new ConflictError(
          `transfer is no longer waiting for a person (its workflow is ${closed}): it was already decided or closed`,
        );
      throw new NotFoundError(`no incoming transfer ${id}`, { field: 'id' });
    }
    if (e instanceof WorkflowUpdateFailedError) throw updateRefusal(e);
    throw e;
  }
}

// The actor is the principal's stable id (the name is the principal's, for display).
const acting = (principal: Principal) => ({ principal, actor: auditActor(principal) });

/** The transfer's status and history, as its workflow answers; 404 for a transfer it does not know. */
export async function incomingStatus(temporal: Client, id: string): Promise<IncomingStatus> {
  try {
    return await temporal.workflow.getHandle(workflowIds.incomingTransfer(id)).query(incomingStatusQuery);
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new NotFoundError(`no incoming transfer ${id}`, { field: 'id' });
    throw e;
  }
}

/** Routes a transfer nobody owns to a subsidiary, in the principal's name. */
export function routeIncoming(
  temporal: Client,
  id: string,
  input: { subsidiaryDid: string; reason: string },
  principal: Principal,
): Promise<IncomingStatus> {
  return update(temporal, id, routeUpdate, { ...input, ...acting(principal) });
}

/** Approves or declines a transfer held for review, in the principal's name. */
export function decideIncoming(
  temporal: Client,
  id: string,
  input: { decision: 'approve' | 'decline'; reason: string },
  principal: Principal,
): Promise<IncomingStatus> {
  return update(temporal, id, decideUpdate, { ...input, ...acting(principal) });
}
