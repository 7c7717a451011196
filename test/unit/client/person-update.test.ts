import {
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Workflow,
  type WorkflowHandle,
} from '@temporalio/client';
import { defineUpdate } from '@temporalio/workflow';
import { executePersonUpdate } from '../../../client/person-update';
import { ConflictError, UpstreamUnavailableError, ValidationError } from '../../../lib/errors';

/** The API's errors for a person's update, from what Temporal's client throws (a handle answering one way). */
describe('executePersonUpdate: the workflow’s answers as the API’s errors', () => {
  const def = defineUpdate<string, [string]>('decide');
  const messages = { closed: (s: string) => `closed: ${s}`, notFound: 'no such record' };
  const throwing = (e: Error) =>
    ({ executeUpdate: async () => Promise.reject(e) }) as unknown as WorkflowHandle<Workflow>;

  it('an update no worker took in time is a 503 (retryable), not an internal error', async () => {
    const e = new WorkflowUpdateRPCTimeoutOrCancelledError('Timed out or cancelled waiting for Update');
    const thrown = await executePersonUpdate(throwing(e), def, 'x', messages).catch((x: unknown) => x);
    expect(thrown).toBeInstanceOf(UpstreamUnavailableError);
    expect(thrown).toMatchObject({ httpStatus: 503, retryable: true });
    expect((thrown as Error).message).toMatch(/outcome is not known yet/);
  });

  it('a validator\'s "field: rule" is a 400 naming the field; another refusal a 409', async () => {
    const bad = new WorkflowUpdateFailedError('failed', new Error('reason: must not be empty'));
    await expect(executePersonUpdate(throwing(bad), def, 'x', messages)).rejects.toMatchObject({
      constructor: ValidationError,
      details: { field: 'reason' },
    });
    const state = new WorkflowUpdateFailedError('failed', new Error('the deposit is no longer held'));
    await expect(executePersonUpdate(throwing(state), def, 'x', messages)).rejects.toBeInstanceOf(ConflictError);
  });
});
