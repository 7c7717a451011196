/**
 * A person's decision sent to a waiting workflow as an update, with the workflow's answers as the API's errors: a
 * validator's "field: rule" is bad input (400), any other refusal is the workflow not being in the state the request
 * needs (409), a finished workflow takes no update (409), and an unknown one is 404. An update no worker took in
 * time (the worker down or far behind) is a 503: its outcome is not known yet, and the caller reads the record or sends
 * the same request again (refused with a 409 if it was taken meanwhile).
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowHandle,
  type Workflow,
} from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { ConflictError, NotFoundError, UpstreamUnavailableError, ValidationError } from '../lib/errors';

export interface PersonUpdateMessages {
  /** Why a finished workflow takes no update; given its status name. */
  closed: (status: string) => string;
  notFound: string;
}

export async function executePersonUpdate<Ret, Args extends [unknown]>(
  handle: WorkflowHandle<Workflow>,
  def: UpdateDefinition<Ret, Args>,
  arg: Args[0],
  messages: PersonUpdateMessages,
): Promise<Ret> {
  try {
    return await handle.executeUpdate(def, { args: [arg] as Args });
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) {
      const closed = await handle.describe().then(
        (d) => d.status.name,
        () => undefined,
      );
      if (closed) throw new ConflictError(messages.closed(closed));
      throw new NotFoundError(messages.notFound, { field: 'id' });
    }
    if (e instanceof WorkflowUpdateFailedError) {
      const message = (e.cause as Error | undefined)?.message ?? e.message;
      const m = /^(\w+): (.+)$/.exec(message);
      throw m ? new ValidationError(m[1]!, m[2]!) : new ConflictError(message);
    }
    if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
      throw new UpstreamUnavailableError(
        'the workflow did not take the request in time (its worker is down or behind): its outcome is not known yet; read the record, or send the request again',
      );
    throw e;
  }
}
