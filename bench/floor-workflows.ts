/**
 * The emptiest workflow shaped like the gateway's incoming path up to "confirmed" (a start, one local activity, a
 * result): what the Temporal server and a worker cost on this machine before any of the project's own work.
 * Bundled only by bench/temporal-floor.ts, never part of the worker's bundle.
 */
import { proxyLocalActivities } from '@temporalio/workflow';

export interface FloorActivities {
  floorStep(id: string): Promise<string>;
}

const { floorStep } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

export async function floorWorkflow(id: string): Promise<string> {
  return floorStep(id);
}
