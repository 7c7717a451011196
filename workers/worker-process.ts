import { ReviewCache } from '../counterparties/review-cache';
import { createPricing } from '../pricing';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { openTransferContext } from '../outgoing/context';
import { NetworkClient } from '../network/client';
import { createRateBudget } from '../network/rate-budget';
import { networkBudgetStore } from '../network/budget-store';
import type { PlatformConfig } from '../config';
import type { Logger } from '../lib/logger';
import { ConfigError } from '../lib/errors';
import { openKeystore } from '../keys';
import { createLogger } from '../lib/logger';
import { loadCodecKeyring } from '../lib/temporal/codec-keys';
import { assertReachable, DEFAULT_DATABASE_URL } from '../db/database-url';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { connectTemporal } from '../lib/temporal/connect';
import { createDataConverter } from '../lib/temporal/data-converter';
import { workflowStatusOf } from '../lib/temporal/workflow-status';
import { createWorker } from './worker';
import { registry } from '../lib/metrics/registry';
import { startMetricsListenerIfFree } from '../lib/metrics/server';
import { startTracing, type Tracing } from '../lib/tracing';

/**
 * The worker process's work (workers/main.ts): the activities' dependencies and one worker on the task queue.
 * `connection` is the all-in-one process's NativeConnection (workers/all-in-one.ts), shared with its Client and closed
 * by it, with the process's tracing; without it the worker connects by itself, and traces when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export async function startWorker(
  config: PlatformConfig,
  log: Logger,
  shared?: { connection: NativeConnection; tracing?: Tracing },
): Promise<() => Promise<void>> {
  const keyring = loadCodecKeyring(config.codecKeys, config.dataDir);
  if (!config.network) {
    throw new ConfigError(
      'BASE_URL',
      'no network is configured',
      'Set CLIENT_ID, CLIENT_SECRET, AUTH_URL and BASE_URL, or run `npm start`, which points the worker at the sandbox',
    );
  }
  const tracing = shared
    ? shared.tracing
    : startTracing({
        otlpEndpoint: config.observability.otlpEndpoint,
        sampler: config.observability.tracesSampler,
        process: 'worker',
      });
  if (tracing && !shared) log.info(`traces exported over OTLP/HTTP to ${config.observability.otlpEndpoint}`);
  const databaseUrl = config.databaseUrl ?? DEFAULT_DATABASE_URL;
  await assertReachable(databaseUrl);
  await migrate(databaseUrl, 'orchestrator');
  const pool = createPool(databaseUrl, 'orchestrator');
  const keystore = await openKeystore(pool, {
    masterKey: config.keystoreMasterKey,
    dataDir: config.dataDir,
    agentKeys: config.agentKeys,
    log,
  });
  const network = new NetworkClient(config.network, {
    budget: createRateBudget(networkBudgetStore(pool), config.networkBudget, config.network.clientId),
  });
  const connection = shared?.connection ?? (await connectTemporal(NativeConnection, config.temporal));
  const reviews = new ReviewCache(pool, (e) => log.warn(`counterparty reviews in memory: ${e.message}`));
  await reviews.start();
  // Activities ask Temporal whether a workflow still runs (the address book's abandoned run locks) and signal the
  // transfers waiting for a wallet proof.
  const temporal = new Client({
    connection: connection as never,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(keyring),
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    keyring,
    tracing,
    tuning: config.worker,
    activities: createActivities({
      pool,
      network,
      logger: createLogger('activities', config.logLevel),
      keystore,
      addressBook: config.addressBook,
      policy: config.policy,
      pricing: createPricing(config.pricing),
      reviews,
      workflowStatus: workflowStatusOf(temporal),
      temporal,
      custody: { url: config.custody.callbackUrl, secret: config.custody.callbackSecret },
      transfers: openTransferContext({
        pool,
        network,
        keystore,
        masterKey: config.keystoreMasterKey,
        dataDir: config.dataDir,
        group: config.group,
        logger: createLogger('transfers', config.logLevel),
        config: config.transfers,
      }),
    }),
  });
  const running = worker.run();
  if (!config.custody.callbackUrl)
    log.info('CUSTODY_CALLBACK_URL is not set: no deposit.* or transfer.* callbacks go to the custody system');
  log.info(`worker polling task queue ${config.temporal.taskQueue} at ${config.temporal.address}`);
  // The all-in-one process's API serves the one registry both share (METRICS_PORT); a worker alone serves its own.
  const { metricsHost, workerMetricsPort } = config.observability;
  const metrics =
    shared || workerMetricsPort === undefined
      ? undefined
      : await startMetricsListenerIfFree(registry, metricsHost, workerMetricsPort, (m) => log.warn(m));
  if (metrics) log.info(`worker metrics at http://${metricsHost}:${metrics.port}/metrics`);
  return async () => {
    worker.shutdown();
    await running;
    await metrics?.close();
    await reviews.stop();
    if (!shared) await connection.close();
    await pool.end();
    if (!shared) await tracing?.shutdown();
  };
}
