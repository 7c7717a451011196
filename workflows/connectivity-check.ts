import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { fetchViewer } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second', backoffCoefficient: 2 },
});

export interface ConnectivityCheckResult {
  checkedAt: string;
  userDid: string;
  vasps: string[];
}

/**
 * Proves the platform end to end: the worker reaches the network with the configured credentials and reports which
 * VASPs they control. `npm start` runs it once so the Temporal UI shows a first run; operators run it after changing
 * credentials.
 */
export async function connectivityCheck(): Promise<ConnectivityCheckResult> {
  const viewer = await fetchViewer();
  return { checkedAt: new Date(workflowInfo().startTime).toISOString(), userDid: viewer.userDid, vasps: viewer.vasps };
}
