import { Client } from 'pg';
import { ConfigError } from '../lib/errors';

export const DEFAULT_DATABASE = 'travel_rule';
export const LOCAL_SERVER_URL = 'postgres://postgres@127.0.0.1:5432';
/**
 * Connection timeouts of the set-up connections. Generous: on a loaded machine (CI on 2 cores, several test runs at
 * once) a process's event loop stalls for seconds while it compiles modules, and the timer then fires first.
 */
const CONNECT_TIMEOUT_MS = 30_000;

/** True when a Postgres server answers at the URL (any database). */
export async function answers(url: string, timeoutMs = 10_000): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the database named in `url` when it does not exist yet (connecting to the server's `postgres` database). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, '')) || DEFAULT_DATABASE;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
  } catch (e) {
    throw new ConfigError(
      'DATABASE_URL',
      `cannot connect to ${target.host} (${(e as Error).message})`,
      'Start PostgreSQL there, or set DATABASE_URL to a server that answers',
    );
  }
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

/** Fails with one clear line when the configured database does not answer. */
export async function assertReachable(url: string): Promise<void> {
  if (!(await answers(url))) {
    const u = new URL(url);
    throw new ConfigError(
      'DATABASE_URL',
      `no PostgreSQL answers at ${u.host}${u.pathname}`,
      'Start the server or correct DATABASE_URL (form postgres://user@host:5432/dbname)',
    );
  }
}

/** Where a process started on its own looks when DATABASE_URL is unset (`npm start` always sets it). */
export const DEFAULT_DATABASE_URL = `${LOCAL_SERVER_URL}/${DEFAULT_DATABASE}`;

async function onServer<T>(serverUrl: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Whether a database of that name exists on the server (`serverUrl` without a database name). */
export const databaseExists = (serverUrl: string, name: string): Promise<boolean> =>
  onServer(serverUrl, async (c) => !!(await c.query('select 1 from pg_database where datname = $1', [name])).rowCount);

/** Drops a database, closing its connections first. */
export const dropDatabase = (serverUrl: string, name: string): Promise<void> =>
  onServer(serverUrl, async (c) => {
    await c.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  });

/** The server processes (backends) serving connections to these databases right now: for per-process CPU figures. */
export const backendPids = (serverUrl: string, databases: string[]): Promise<number[]> =>
  onServer(serverUrl, async (c) =>
    (
      await c.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = any($1) and pid <> pg_backend_pid()',
        [databases],
      )
    ).rows.map((r) => r.pid),
  );
