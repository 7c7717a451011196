import { join } from 'node:path';
import { Client } from 'pg';
import type { SchemaOwner } from './pool';

/** Distinct advisory-lock ids, so the orchestrator's and the sandbox's migrations never block each other. */
const LOCK_VALUES: Record<SchemaOwner, number> = { orchestrator: 7241865325823964, sandbox: 7241865325823965 };

/**
 * Migrations renamed after databases had applied them (old name → new name, without `.sql`). node-pg-migrate records
 * applied migrations by file name, so the records are renamed before it runs: a database that applied the old names
 * finds every file applied and in order. Each new name keeps its file's place in the order.
 */
export const RENAMED_MIGRATIONS: Record<SchemaOwner, Readonly<Record<string, string>>> = {
  orchestrator: {},
  // Two pairs shared a number (0003, 0008); every sandbox file from the second 0003 on moved up.
  sandbox: {
    '0003_address-book-version': '0004_address-book-version',
    '0004_transactions-pii-webhooks': '0005_transactions-pii-webhooks',
    '0005_nested-routing': '0006_nested-routing',
    '0006_webhook-holds': '0007_webhook-holds',
    '0007_operator-clients': '0008_operator-clients',
    '0008_operator-apps': '0009_operator-apps',
    '0008_sim-counterparty-previous-keys': '0010_sim-counterparty-previous-keys',
    '0009_transaction-ref-request-hash': '0011_transaction-ref-request-hash',
    '0010_simulated-vasps': '0012_simulated-vasps',
  },
};

/**
 * Renames the records of renamed migrations, in one statement: concurrent callers rename each row once, and every
 * caller has committed its rename before its runner reads the records. A database without the table has nothing to do.
 */
async function renameApplied(client: Client, owner: SchemaOwner): Promise<void> {
  const pairs = Object.entries(RENAMED_MIGRATIONS[owner]);
  if (!pairs.length) return;
  const { rows } = await client.query<{ t: string | null }>('select to_regclass($1) as t', [`"${owner}".pgmigrations`]);
  if (!rows[0]?.t) return;
  await client.query(
    `update "${owner}".pgmigrations m set name = r.new_name
       from unnest($1::text[], $2::text[]) as r(old_name, new_name) where m.name = r.old_name`,
    [pairs.map(([o]) => o), pairs.map(([, n]) => n)],
  );
}

/**
 * Applies the versioned SQL migrations of one schema owner (db/migrations/<owner>/NNNN_name.sql, each with an
 * `-- Up Migration` section). node-pg-migrate records applied files in <owner>.pgmigrations under an advisory lock;
 * when another process (the API and the worker start together) holds the lock, this waits for it rather than failing,
 * then finds nothing left to do.
 */
export async function migrate(databaseUrl: string, owner: SchemaOwner, waitMs = 60_000): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    // Our own client, ended and awaited here: the runner's own close is not awaited, and a server stopped right after
    // a migration would otherwise kill a half-closed connection whose error nobody handles.
    const client = new Client({ connectionString: databaseUrl });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await renameApplied(client, owner);
      const applied = await runner({
        dbClient: client,
        dir: join(__dirname, 'migrations', owner),
        migrationsTable: 'pgmigrations',
        schema: owner,
        createSchema: true,
        direction: 'up',
        count: Infinity,
        singleTransaction: true,
        checkOrder: true,
        lockValue: LOCK_VALUES[owner],
        // The library's own logger prints every statement; callers log the summary instead.
        log: () => undefined,
      });
      return applied.map((m) => m.name);
    } catch (e) {
      if (!/Another migration is already running/.test((e as Error).message) || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, delay));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
