import { join } from 'node:path';
import { Client } from 'pg';
import type { SchemaOwner } from './pool';

/** Distinct advisory-lock ids, so the orchestrator's and the sandbox's migrations never block each other. */
const LOCK_VALUES: Record<SchemaOwner, number> = { orchestrator: 7241865325823964, sandbox: 7241865325823965 };

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
