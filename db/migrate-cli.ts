// `npm run migrate`: applies the orchestrator's and the sandbox's migrations to the configured databases and says
// what it applied. The API, the worker and the sandbox also migrate at start; this is for deployments that run schema
// changes as a step of their own before rolling out new processes.
import { loadConfig } from '../config';
import { ConfigError } from '../lib/errors';
import { ensureDatabase } from './database-url';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    throw new ConfigError(
      'DATABASE_URL',
      'is required for npm run migrate',
      'Set DATABASE_URL=postgres://user@host:5432/dbname',
    );
  }
  const targets = [
    { owner: 'orchestrator' as const, url: config.databaseUrl },
    { owner: 'sandbox' as const, url: config.sandboxDatabaseUrl ?? config.databaseUrl },
  ];
  for (const { owner, url } of targets) {
    await ensureDatabase(url);
    const applied = await migrate(url, owner);
    process.stdout.write(`${owner}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}\n`);
  }
}

main().catch((e: Error) => {
  process.stderr.write(`migrate: ${e instanceof ConfigError ? 'configuration error: ' : ''}${e.message}\n`);
  process.exit(1);
});
