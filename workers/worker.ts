import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { CodecKeyring } from '../lib/temporal/codec';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { Activities } from '../activities';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  keyring: CodecKeyring;
  /** A prebuilt workflow bundle (tests build one per run); otherwise the worker bundles workflows/ itself. */
  workflowBundlePath?: string;
  options?: Partial<WorkerOptions>;
}

export const workflowsPath = require.resolve('../workflows');

/**
 * The project's worker: its workflows, the given activities, and the encrypting data converter, which refuses
 * plaintext payloads: a workflow started or signalled without the codec fails its workflow task (retried by the
 * server, visible in the UI) and runs nothing with that input.
 */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundlePath ? { workflowBundle: { codePath: deps.workflowBundlePath } } : { workflowsPath }),
    activities: deps.activities,
    dataConverter: createDataConverter(deps.keyring, { refuseUnencrypted: true }),
    ...deps.options,
  });
}
