import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one database transaction on one connection: committed when it returns, rolled back when it throws.
 * With `lockKey`, the transaction first takes a transaction-scoped advisory lock on it, so changes to the same subject
 * (a VASP's keys, say) never interleave while other subjects go on in parallel.
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  lockKey?: string,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    if (lockKey !== undefined) await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * One connection in a read-only repeatable-read transaction: every read through `client` sees the same snapshot, and
 * writes committed meanwhile neither show nor disturb it. `close` ends the transaction and gives the connection back.
 */
export async function openReadOnlySnapshot(pool: Pool): Promise<{ client: PoolClient; close: () => Promise<void> }> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
  } catch (e) {
    client.release();
    throw e;
  }
  return {
    client,
    close: async () => {
      await client.query('rollback').catch(() => undefined);
      client.release();
    },
  };
}
