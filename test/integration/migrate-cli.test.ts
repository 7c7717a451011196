import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { testEnv } from '../harness/platform';

const root = resolve(__dirname, '../..');
const runMigrate = (env: Record<string, string>) =>
  spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'db/migrate-cli.ts')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? '', ...env },
  });

it('npm run migrate creates the database, applies both schemas once, and refuses to run without DATABASE_URL', async () => {
  const url = new URL(testEnv().databaseUrl);
  const name = `${url.pathname.slice(1)}_migrate_cli`;
  url.pathname = `/${name}`;
  const admin = new Client({ connectionString: testEnv().databaseUrl });
  await admin.connect();
  try {
    const first = runMigrate({ DATABASE_URL: url.toString() });
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^orchestrator: applied 0001_audit-log, /m);
    expect(first.stdout).toMatch(/^sandbox: applied 0001_directory-and-auth, /m);
    const second = runMigrate({ DATABASE_URL: url.toString() });
    expect(second.stdout).toBe('orchestrator: up to date\nsandbox: up to date\n');

    const missing = runMigrate({});
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('DATABASE_URL: is required for npm run migrate');
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
});
