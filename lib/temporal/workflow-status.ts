import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/** A workflow's status by Temporal ('RUNNING', 'COMPLETED', 'TERMINATED', …), or 'NOT_FOUND' when it has none. */
export function workflowStatusOf(client: Client): (workflowId: string) => Promise<string> {
  return async (workflowId) => {
    try {
      return (await client.workflow.getHandle(workflowId).describe()).status.name;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw e;
    }
  };
}
