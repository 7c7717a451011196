import { Client, Connection } from '@temporalio/client';
import { sleep } from './processes';

/**
 * The runs of the given workflow ids of one workflow type and their statuses, from the Temporal server's visibility
 * (read until every id has a closed run, or for 30 s: visibility may trail the histories by a moment). The chaos run's
 * "one workflow run each" checks of wallet proofs and deposits read it.
 */
export async function workflowRuns(
  address: string,
  workflowType: string,
  workflowIds: Set<string>,
): Promise<Map<string, string[]>> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    let runs = new Map<string, string[]>();
    for (let attempt = 0; attempt < 15; attempt++) {
      runs = new Map();
      for await (const wf of client.workflow.list({ query: `WorkflowType = '${workflowType}'` })) {
        if (!workflowIds.has(wf.workflowId)) continue;
        runs.set(wf.workflowId, [...(runs.get(wf.workflowId) ?? []), wf.status.name]);
      }
      const settled = [...workflowIds].every((id) => (runs.get(id) ?? []).some((s) => s !== 'RUNNING'));
      if (settled) break;
      await sleep(2000);
    }
    return runs;
  } finally {
    await connection.close();
  }
}
