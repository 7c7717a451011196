/**
 * The Temporal server of `npm run chaos`: the dev server on its SQLite file (the default) or, with `--cluster`, the
 * real server on PostgreSQL with databases of the run's own, prepared as `npm run start:cluster` prepares its server
 * (scripts/cluster/run-server.ts, shared with the cluster test suite). Either way one process the chaos kills with
 * SIGKILL and starts again with the same command on the same storage.
 *
 * SIGKILL of the dev server is survivable: it keeps its state in one SQLite file (`--db-filename`, rollback journal,
 * the driver's default synchronous=FULL), and SQLite's commits are atomic when the process dies at any point (a
 * half-written transaction's journal is rolled back at the next open). Measured before switching from SIGTERM:
 * 10 SIGKILLs of the dev server while 8 clients started and signalled workflows and a worker ran them left
 * `pragma integrity_check` ok after each kill, and every acknowledged start and signal completed (docs/reliability.md).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { searchAttributeCliArgs } from '../../lib/temporal/search-attributes';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/temporal-server';
import { ensureTemporalCli, TEMPORAL_CLI_VERSION } from '../../scripts/temporal-cli';
import { prepareRunCluster } from '../../scripts/cluster/run-server';
import { initTemporalCluster } from '../../scripts/cluster/temporal-cluster';
import { freePort, Proc, temporalReady } from './processes';

export interface ChaosTemporal {
  proc: Proc;
  address: string;
  /** Which server runs, for the table. */
  label: string;
  /** How the chaos stops it before each restart. */
  killSignal: NodeJS.Signals;
  /** The first start, with the namespace and search attributes ready. */
  start(): Promise<void>;
  /** The server's own storage as text, for the secrets scan (what an attacker with the disk or database reads). */
  storage(): { name: string; text: string };
  /** Removes the storage (the file or the databases): at the end of a run without --keep. */
  remove(): Promise<void>;
}

export async function chaosTemporal(opts: {
  cluster: boolean;
  tag: string;
  dataDir: string;
  logDir: string;
  /** The PostgreSQL server, without a database name. */
  serverUrl: string;
  log: (line: string) => void;
}): Promise<ChaosTemporal> {
  return opts.cluster ? clusterServer(opts) : devServer(opts);
}

async function devServer(opts: {
  dataDir: string;
  logDir: string;
  log: (line: string) => void;
}): Promise<ChaosTemporal> {
  const cli = await ensureTemporalCli(opts.log);
  const address = `127.0.0.1:${await freePort()}`;
  const file = resolve(opts.dataDir, 'temporal.db');
  const files = [file, `${file}-journal`, `${file}-wal`, `${file}-shm`];
  const proc = new Proc(
    'temporal',
    [
      cli,
      'server',
      'start-dev',
      '--db-filename',
      file,
      '--ip',
      '127.0.0.1',
      '--port',
      address.split(':')[1]!,
      '--headless',
      '--namespace',
      'default',
      '--log-level',
      'warn',
      ...searchAttributeCliArgs(),
    ],
    {},
    opts.logDir,
    temporalReady(address),
  );
  return {
    proc,
    address,
    label: `Temporal dev server (CLI ${TEMPORAL_CLI_VERSION}, SQLite file)`,
    killSignal: 'SIGKILL',
    start: () => proc.start(),
    storage: () => ({
      name: "the Temporal dev server's SQLite file",
      text: files
        .filter((f) => existsSync(f))
        .map((f) => readFileSync(f).toString('latin1'))
        .join('\n'),
    }),
    remove: async () => {
      for (const f of files) rmSync(f, { force: true });
    },
  };
}

async function clusterServer(opts: {
  tag: string;
  dataDir: string;
  logDir: string;
  serverUrl: string;
  log: (line: string) => void;
}): Promise<ChaosTemporal> {
  const rootDir = resolve(opts.dataDir, 'temporal-cluster');
  // Named for the run (time and pid), so chaos runs side by side, the cluster suite and start:cluster never share one.
  const run = await prepareRunCluster({
    serverUrl: opts.serverUrl,
    rootDir,
    database: `tro_chaos_${opts.tag}_temporal`,
    log: opts.log,
  });
  const proc = new Proc('temporal', run.command, {}, opts.logDir, temporalReady(run.address));
  opts.log(`Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL: databases ${run.databases.join(', ')}`);
  return {
    proc,
    address: run.address,
    label: `Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL`,
    killSignal: 'SIGKILL',
    start: async () => {
      await proc.start();
      await initTemporalCluster(run.address, 'default', { isStopped: () => proc.pid === undefined });
    },
    storage: () => ({
      name: "pg_dump of the Temporal server's two databases",
      // bytea in escape form: printable bytes stay as they are, so plaintext inside history blobs would be found.
      text: run.databases
        .map((d) =>
          execFileSync('pg_dump', ['--no-owner', '--dbname', `${opts.serverUrl}/${d}`], {
            maxBuffer: 2 ** 31 - 1,
            encoding: 'utf8',
            env: { ...process.env, PGOPTIONS: '-c bytea_output=escape' },
          }),
        )
        .join('\n'),
    }),
    remove: async () => {
      await run.dropDatabases();
      rmSync(rootDir, { recursive: true, force: true });
    },
  };
}
