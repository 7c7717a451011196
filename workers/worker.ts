import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { CodecKeyring } from '../lib/temporal/codec';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { Activities } from '../activities';
import { localCallDigests } from '../activities/context';
import { droppedWorkflowSpans, type Tracing } from '../lib/tracing';
import { tuningOptions, type WorkerTuning } from '../lib/temporal/worker-tuning';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  keyring: CodecKeyring;
  /** A prebuilt workflow bundle (tests build one per run); else `npm run build`'s, else the worker bundles workflows/. */
  workflowBundlePath?: string;
  /** The process's tracing (lib/tracing): activity interceptors and the sink of the workflows' spans; absent: off. */
  tracing?: Tracing;
  /** WORKER_* capacity settings (lib/temporal/worker-tuning.ts); each unset one is the SDK's default. */
  tuning?: WorkerTuning;
  options?: Partial<WorkerOptions>;
}

export const workflowsPath = require.resolve('../workflows');
/** Bundled with the workflows wherever they are bundled (scripts/build.cjs, test/harness/global-setup.ts, here). */
export const workflowInterceptorModules = [require.resolve('../workflows/tracing-interceptors')];

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
    ...workflowCode(deps.workflowBundlePath, deps.tracing),
    activities: deps.activities,
    dataConverter: createDataConverter(deps.keyring, { refuseUnencrypted: true }),
    sinks: deps.tracing?.sinks ?? droppedWorkflowSpans,
    ...tuningOptions(deps.tuning ?? {}),
    ...deps.options,
  });
}

function workflowCode(
  bundlePath: string | undefined,
  tracing: Tracing | undefined,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors'> {
  const codePath = bundlePath ?? (existsSync(builtBundle) ? builtBundle : undefined);
  const activity = [localCallDigests, ...(tracing?.workerInterceptors.activity ?? [])];
  // A prebuilt bundle holds the workflow interceptor modules already; bundling here adds them.
  return codePath
    ? { workflowBundle: { codePath }, interceptors: { activity } }
    : { workflowsPath, interceptors: { activity, workflowModules: workflowInterceptorModules } };
}
