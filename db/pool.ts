import { Pool, type PoolClient, type PoolConfig } from 'pg';

/** A pool, or one of its clients (in a transaction when the caller needs one): what a store's reads take. */
export type Queryable = Pool | PoolClient;

/** The two schemas in the database. The orchestrator and the sandbox each own one and never read the other's. */
export type SchemaOwner = 'orchestrator' | 'sandbox';

export function createPool(databaseUrl: string, schema: SchemaOwner, extra: PoolConfig = {}): Pool {
  const pool = new Pool({
    connectionString: databaseUrl,
    max: 10,
    // The owner's schema first pins unqualified table names to it; public holds extensions such as pg_trgm.
    options: `-c search_path=${schema},public`,
    application_name: `travel-rule-${schema}`,
    ...extra,
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** One round trip to the database (the health check's probe). */
export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('select 1');
}
