/**
 * The all-in-one process (`npm run all-in-one`, or `npm start -- --all-in-one`): the internal API and a worker in one
 * Node process on one NativeConnection, for small deployments and a laptop. The API's Client shares the worker's
 * connection, so it asks for eager starts: the server hands a new transfer's first workflow task back with the start
 * call, to this worker, instead of through the task queue. More workers may still run beside it on the same queue.
 */
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startApi } from '../client/api-process';
import { loadConfig } from '../config';
import { runMain } from '../config/run-main';
import { loadCodecKeyring } from '../lib/temporal/codec-keys';
import { connectTemporal } from '../lib/temporal/connect';
import { createDataConverter } from '../lib/temporal/data-converter';
import { startWorker } from './worker-process';
import { installTemporalRuntime } from './telemetry';
import { startTracing } from '../lib/tracing';

runMain('all-in-one', async (log) => {
  const config = loadConfig();
  await installTemporalRuntime(config.observability, log);
  const tracing = startTracing({
    otlpEndpoint: config.observability.otlpEndpoint,
    sampler: config.observability.tracesSampler,
    process: 'all-in-one',
  });
  if (tracing) log.info(`traces exported over OTLP/HTTP to ${config.observability.otlpEndpoint}`);
  const connection = await connectTemporal(NativeConnection, config.temporal);
  // A Client on a NativeConnection: what eager start needs (the SDK hands the task to a worker on that connection).
  const temporal = new Client({
    connection: connection as never,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(loadCodecKeyring(config.codecKeys, config.dataDir)),
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  const stopWorker = await startWorker(config, log, { connection, tracing });
  const stopApi = await startApi(config, log, { temporal, tracing });
  log.info("all-in-one: the API starts workflows eagerly on this process's worker");
  return async () => {
    await stopApi();
    await stopWorker();
    await connection.close();
    await tracing?.shutdown();
  };
});
