import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { migrate, RENAMED_MIGRATIONS } from '../../db/migrate';
import { ownDatabase } from '../harness/platform';

const SANDBOX = resolve(__dirname, '../../db/migrations/sandbox');
const files = readdirSync(SANDBOX)
  .filter((f) => f.endsWith('.sql'))
  .sort();
const newNames = files.map((f) => f.replace(/\.sql$/, ''));

/** The sandbox's migrations as they were named before the renames: the same SQL under the old file names. */
function oldLayout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'old-migrations-'));
  const oldOf = new Map(Object.entries(RENAMED_MIGRATIONS.sandbox).map(([o, n]) => [n, o]));
  for (const f of files)
    copyFileSync(join(SANDBOX, f), join(dir, `${oldOf.get(f.replace(/\.sql$/, '')) ?? f.replace(/\.sql$/, '')}.sql`));
  return dir;
}

async function applyOld(url: string, count: number): Promise<string[]> {
  const dir = oldLayout();
  const { runner } = await import('node-pg-migrate');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const applied = await runner({
      dbClient: client,
      dir,
      migrationsTable: 'pgmigrations',
      schema: 'sandbox',
      createSchema: true,
      direction: 'up',
      count,
      singleTransaction: true,
      checkOrder: true,
      log: () => undefined,
    });
    return applied.map((m) => m.name);
  } finally {
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function recorded(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('select name from sandbox.pgmigrations order by run_on, id')).rows.map(
      (r) => r.name,
    );
  } finally {
    await client.end();
  }
}

describe('renamed sandbox migrations: a database migrated under the old names migrates cleanly under the new ones', () => {
  const full = ownDatabase('oldnames');
  const partial = ownDatabase('oldpartial');
  beforeAll(async () => Promise.all([full.create(), partial.create()]));
  afterAll(async () => Promise.all([full.drop(), partial.drop()]));

  it('every old name applied: nothing runs again and the records carry the new names', async () => {
    const old = await applyOld(full.url, Infinity);
    expect(old).toContain('0008_operator-apps');
    expect(old).toContain('0008_sim-counterparty-previous-keys');
    expect(old).toHaveLength(files.length);
    expect(await migrate(full.url, 'sandbox')).toEqual([]);
    expect(await recorded(full.url)).toEqual(newNames);
    // A second start finds the same.
    expect(await migrate(full.url, 'sandbox')).toEqual([]);
  });

  it('some old names applied: the rest runs under the new names, in order', async () => {
    // Up to the first of the two old 0008s.
    const old = await applyOld(partial.url, 9);
    expect(old[old.length - 1]).toBe('0008_operator-apps');
    expect(await migrate(partial.url, 'sandbox')).toEqual(newNames.slice(9));
    expect(await recorded(partial.url)).toEqual(newNames);
    // The columns the remaining migrations add are there: their SQL ran, not only their records.
    const client = new Client({ connectionString: partial.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_name: string; column_name: string }>(
        `select table_name, column_name from information_schema.columns
          where table_schema = 'sandbox' and column_name in ('previous_keys', 'simulated') order by column_name`,
      );
      expect(rows).toEqual([
        { table_name: 'sim_counterparties', column_name: 'previous_keys' },
        { table_name: 'vasps', column_name: 'simulated' },
      ]);
    } finally {
      await client.end();
    }
  });
});
