/** The connectivity check, for the API: started as its own workflow, read back by its workflow id. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { NotFoundError } from '../../lib/errors';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { connectivityCheck } from '../../workflows';

type CheckResult = Awaited<ReturnType<typeof connectivityCheck>>;

export async function startConnectivityCheck(deps: {
  temporal: Client;
  taskQueue: string;
}): Promise<{ workflowId: string; runId: string }> {
  const handle = await deps.temporal.workflow.start(connectivityCheck, {
    taskQueue: deps.taskQueue,
    workflowId: workflowIds.connectivityCheck(new Date()),
  });
  return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
}

/** The check's workflow status, with its result once it completed; 404 for a check Temporal does not know. */
export async function connectivityCheckState(
  temporal: Client,
  workflowId: string,
): Promise<{ workflowId: string; status: string; result?: CheckResult }> {
  const handle = temporal.workflow.getHandle<typeof connectivityCheck>(workflowId);
  try {
    const { status } = await handle.describe();
    if (status.name !== 'COMPLETED') return { workflowId, status: status.name };
    return { workflowId, status: status.name, result: await handle.result() };
  } catch (e) {
    if (e instanceof WorkflowNotFoundError)
      throw new NotFoundError(`no connectivity check ${workflowId}`, { field: 'workflowId' });
    throw e;
  }
}
