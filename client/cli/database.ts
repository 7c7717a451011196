import type { Pool } from 'pg';
import { DEFAULT_DATABASE_URL } from '../../db/database-url';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { loadConfig } from '../../config';

/**
 * Runs a CLI command's work against the orchestrator's database (DATABASE_URL), migrated first so the first command
 * on a new database works; `given` (tests) is used as is and left open.
 */
export async function withCliPool<T>(given: Pool | undefined, fn: (pool: Pool) => Promise<T>): Promise<T> {
  if (given) return fn(given);
  const url = loadConfig().databaseUrl ?? DEFAULT_DATABASE_URL;
  await migrate(url, 'orchestrator');
  const pool = createPool(url, 'orchestrator');
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}
