import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
  /** A prebuilt workflow bundle (tests build one per run); else `npm run build`'s, else the worker bundles workflows/. */
  workflowBundlePath?: string;
  options?: Partial<WorkerOptions>;
}

export const workflowsPath = require.resolve('../workflows');

/** `npm run build` writes the bundle beside the compiled code (dist/workflow-bundle.js); from source there is none. */
const builtBundle = join(__dirname, '..', 'workflow-bundle.js');

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
    ...workflowCode(deps.workflowBundlePath),
    activities: deps.activities,
    dataConverter: createDataConverter(deps.keyring, { refuseUnencrypted: true }),
    ...deps.options,
  });
}

function workflowCode(bundlePath: string | undefined): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const codePath = bundlePath ?? (existsSync(builtBundle) ? builtBundle : undefined);
  return codePath ? { workflowBundle: { codePath } } : { workflowsPath };
}
