import { createServer, type Server } from 'node:net';
import { CLUSTER_PORT_OFFSETS, loadClusterConfig, MAX_MEMBERSHIP_PORT, type ClusterConfig } from '../../config';
import { dropDatabase } from '../../db/database-url';
import { clusterDatabases, prepareTemporalCluster } from './temporal-cluster';

/**
 * A Temporal server on PostgreSQL of one run's own, beside whatever else runs on the machine: the cluster test suite
 * (test/harness/cluster.ts, which the benchmarks' `--cluster` reuses) and `npm run chaos -- --cluster`. Prepared exactly
 * as `npm run start:cluster` prepares its server (prepareTemporalCluster), but with databases named for the run and
 * ports free right now, so two runs side by side never share either. The caller starts `command` however it wants to
 * manage the process (detached for jest, a killable child for chaos), then registers the namespace with
 * `initTemporalCluster(address, …)`, and at the end drops the databases.
 */
export interface RunCluster {
  cluster: ClusterConfig;
  /** The frontend, host:port. */
  address: string;
  /** The server's command line (argv), the same for every start of the run. */
  command: string[];
  /** The server's two databases (`<database>` and `<database>_visibility`). */
  databases: string[];
  dropDatabases(): Promise<void>;
}

/**
 * `count` ports free right now, below `MAX_MEMBERSHIP_PORT` (the kernel's own choice of a free port is above it, and
 * the server stores membership ports in a smallint), held together while chosen so none repeats.
 */
export async function freeClusterPorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    while (servers.length < count) {
      const s = createServer();
      const port = 20_000 + Math.floor(Math.random() * (MAX_MEMBERSHIP_PORT - 20_000));
      const ok = await new Promise<boolean>((r) => {
        s.once('error', () => r(false));
        s.listen(port, '127.0.0.1', () => r(true));
      });
      if (ok) servers.push(s);
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/**
 * Builds the server if missing, creates and migrates the run's databases (`database`, a plain name unique to the run:
 * callers put the time and their pid in it) and writes the config under `rootDir` for ports free now.
 */
export async function prepareRunCluster(opts: {
  serverUrl: string;
  rootDir: string;
  database: string;
  log: (line: string) => void;
}): Promise<RunCluster> {
  const names = Object.keys(CLUSTER_PORT_OFFSETS) as (keyof typeof CLUSTER_PORT_OFFSETS)[];
  const [frontend, ...others] = await freeClusterPorts(names.length + 1);
  const address = `127.0.0.1:${frontend}`;
  const cluster = loadClusterConfig({
    TEMPORAL_ADDRESS: address,
    TEMPORAL_CLUSTER_DATABASE: opts.database,
    ...Object.fromEntries(names.map((n, i) => [CLUSTER_PORT_OFFSETS[n][0], String(others[i])])),
  });
  const databases = clusterDatabases(cluster.database);
  const dropDatabases = async () => {
    await Promise.all(databases.map((d) => dropDatabase(opts.serverUrl, d)));
  };
  try {
    const command = await prepareTemporalCluster({
      cluster,
      serverUrl: opts.serverUrl,
      rootDir: opts.rootDir,
      log: opts.log,
    });
    return { cluster, address, command, databases, dropDatabases };
  } catch (e) {
    // A migration that failed half-way leaves a database the next run would not use: drop it now.
    await dropDatabases().catch(() => undefined);
    throw e;
  }
}
