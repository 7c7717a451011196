import { loadSandboxConfig } from './config';
import { createLogger } from '../lib/logger';
import { createPool } from '../db/pool';
import { migrate } from '../db/migrate';
import { assertReachable, DEFAULT_DATABASE_URL } from '../db/database-url';
import { applySeed, readSeedFile } from './seed';
import { buildSandbox } from './server';
import { runMain } from '../config/run-main';
import { apiHttpsOptions } from '../lib/api-transport';

runMain('sandbox', async (log) => {
  const config = loadSandboxConfig();
  const databaseUrl = config.databaseUrl ?? DEFAULT_DATABASE_URL;
  const seed = config.seedFile ? readSeedFile(config.seedFile) : undefined;
  await assertReachable(databaseUrl);
  const applied = await migrate(databaseUrl, 'sandbox');
  if (applied.length) log.info({ applied }, 'sandbox migrations applied');
  const pool = createPool(databaseUrl, 'sandbox');
  if (seed) await applySeed(pool, seed);
  // The same TLS files as the API, when set: a sandbox reached over a network must be https for the orchestrator.
  const https = config.transport?.tls ? apiHttpsOptions(config.host, config.transport) : undefined;
  const app = await buildSandbox({ pool, config, logger: createLogger('sandbox', config.logLevel), https });
  await app.listen({ host: config.host, port: config.port });
  log.info(`sandbox listening on ${config.publicUrl}`);
  return async () => {
    await app.close();
    await pool.end();
  };
});
