import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureTemporalCli } from '../../scripts/temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../../lib/temporal/search-attributes';
import { ensureDatabase } from '../../db/database-url';
import { migrate } from '../../db/migrate';
import { resolveDatabaseServer } from '../../db/server';

/**
 * Once per `npm test`: a real Temporal dev server on free ports (the cached CLI binary, never a download), a fresh
 * database on the real PostgreSQL server with both schemas migrated, a codec key, and one workflow bundle that every
 * test worker reuses. Tests read them from the TEST_* variables; global-teardown.ts removes them.
 */
export default async function globalSetup(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[test setup] ${line}\n`);
  const cli = await ensureTemporalCli(log);

  const [env, db, bundle] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'existing-path', path: cli }, ip: '127.0.0.1', searchAttributes: ALL_SEARCH_ATTRIBUTES },
    }),
    (async () => {
      const server = await resolveDatabaseServer({ databaseUrl: process.env.DATABASE_URL, dataDir: '.data', log });
      const url = `${server.serverUrl}/tro_test_${Date.now()}_${process.pid}`;
      await ensureDatabase(url);
      await Promise.all([migrate(url, 'orchestrator'), migrate(url, 'sandbox')]);
      return { server, url };
    })(),
    bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows'),
      failureConverterPath: require.resolve('../../lib/temporal/failure-converter'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => log(m), log() {} } as never,
    }),
  ]);

  const bundlePath = join(tmpdir(), `tro-workflow-bundle-${process.pid}.js`);
  writeFileSync(bundlePath, bundle.code);

  process.env.TEST_TEMPORAL_ADDRESS = env.address;
  process.env.TEST_DATABASE_URL = db.url;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.TEST_CODEC_KEYS = `test-${Date.now()}:${randomBytes(32).toString('base64')}`;
  Object.assign(globalThis, { __testEnv: env, __testDb: db });
}
