import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowInterceptorModules } from '../../workers/worker';
import { ensureTemporalCli } from '../../scripts/temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../../lib/temporal/search-attributes';
import { ensureDatabase } from '../../db/database-url';
import { migrate } from '../../db/migrate';
import { resolveDatabaseServer, type DatabaseServer } from '../../db/server';

export const setupLog = (line: string) => process.stderr.write(`[test setup] ${line}\n`);

/** A Temporal server the run's tests use; global-teardown.ts calls `teardown`. */
export interface TestTemporal {
  address: string;
  teardown(): Promise<void>;
}

/**
 * Both suites' setups run in jest's main process before any test, so each keeps its settings apart: environment
 * variables under its own prefix (the cluster suite's setup file copies its own to TEST_*), state under its own key.
 */
export interface RunKeys {
  envPrefix: 'TEST_' | 'TEST_CLUSTER_';
  globalKey: string;
}
export const DEV_SERVER_RUN: RunKeys = { envPrefix: 'TEST_', globalKey: '__testRun' };

/**
 * What every integration run needs besides Temporal: a fresh database on the real PostgreSQL server with both schemas
 * migrated, a codec key, and one workflow bundle that every test worker reuses. `startTemporal` runs alongside and
 * gets the database server (the cluster suite puts Temporal's own databases there). Tests read the TEST_* variables.
 */
export async function prepareRun(
  keys: RunKeys,
  startTemporal: (server: DatabaseServer) => Promise<TestTemporal>,
): Promise<void> {
  const tag = `${Date.now()}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const server = await resolveDatabaseServer({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: '.data',
    log: setupLog,
  });
  // allSettled: should one part fail, the Temporal server the other started is stopped rather than left running.
  const settled = await Promise.allSettled([
    startTemporal(server),
    (async () => {
      const url = `${server.serverUrl}/tro_test_${tag}`;
      await ensureDatabase(url);
      await Promise.all([migrate(url, 'orchestrator'), migrate(url, 'sandbox')]);
      return url;
    })(),
    bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows'),
      workflowInterceptorModules,
      failureConverterPath: require.resolve('../../lib/temporal/failure-converter'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => setupLog(m), log() {} } as never,
    }),
  ] as const);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    if (settled[0].status === 'fulfilled') await settled[0].value.teardown().catch(() => undefined);
    await server.stop().catch(() => undefined);
    throw failed.reason;
  }
  const [temporal, url, bundle] = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
    TestTemporal,
    string,
    { code: string },
  ];

  const bundlePath = join(tmpdir(), `tro-workflow-bundle-${tag}.js`);
  writeFileSync(bundlePath, bundle.code);

  const p = keys.envPrefix;
  // Every API and worker process a test starts serves /metrics on a free port: several run at once, beside whatever
  // else this machine runs (the defaults 9464–9466 are one per machine).
  process.env.METRICS_PORT ??= '0';
  process.env.WORKER_METRICS_PORT ??= '0';
  process.env.TEMPORAL_SDK_METRICS_PORT ??= 'off';
  process.env[`${p}TEMPORAL_ADDRESS`] = temporal.address;
  process.env[`${p}DATABASE_URL`] = url;
  process.env[`${p}WORKFLOW_BUNDLE`] = bundlePath;
  process.env[`${p}CODEC_KEYS`] = `test-${Date.now()}:${randomBytes(32).toString('base64')}`;
  Object.assign(globalThis, { [keys.globalKey]: { temporal, server, url, bundlePath } satisfies PreparedRun });
}

export interface PreparedRun {
  temporal: TestTemporal;
  server: DatabaseServer;
  url: string;
  bundlePath: string;
}

/**
 * Once per `npm test`: a real Temporal dev server on free ports (the cached CLI binary, never a download) and what
 * `prepareRun` adds.
 */
export default async function globalSetup(): Promise<void> {
  const cli = await ensureTemporalCli(setupLog);
  await prepareRun(DEV_SERVER_RUN, () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        searchAttributes: ALL_SEARCH_ATTRIBUTES,
      },
    }),
  );
}
