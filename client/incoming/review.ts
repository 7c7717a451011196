/**
 * A person's side of an incoming transfer, for the API: its status, routing one nobody owns and deciding one held for
 * review, as queries and updates of its workflow (workflows/incoming-transfer.ts validates each update).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { NotFoundError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { executePersonUpdate } from '../person-update';
import {
  decideUpdate,
  incomingStatusQuery,
  routeUpdate,
  type IncomingStatus,
} from '../../workflows/incoming-transfer.messages';

function update<A>(
  temporal: Client,
  id: string,
  def: typeof routeUpdate | typeof decideUpdate,
  arg: A,
): Promise<IncomingStatus> {
  return executePersonUpdate(
    temporal.workflow.getHandle(workflowIds.incomingTransfer(id)),
    def as never,
    arg as never,
    {
      // A finished workflow takes no update either: that is a transfer already decided (or closed), not an unknown one.
      closed: (status) =>
        `transfer is no longer waiting for a person (its workflow is ${status}): it was already decided or closed`,
      notFound: `no incoming transfer ${id}`,
    },
  );
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
