import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { ClusterConfig } from '../../config';
import { ALL_SEARCH_ATTRIBUTES } from '../../lib/temporal/search-attributes';
import { databaseExists } from '../../db/database-url';
import { ensureTemporalServer, ensureTemporalUiServer, type TemporalServerBinaries } from '../temporal-server';

/**
 * The Temporal server on PostgreSQL, as production runs it: its two databases created and migrated with
 * temporal-sql-tool, a config file written for the given ports, the server started by the caller with `serverCommand`,
 * then the namespace and the search attributes registered. Used by `npm run start:cluster` and by the cluster tests.
 */
export interface PgServer {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function pgServerOf(serverUrl: string): PgServer {
  const u = new URL(serverUrl);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password),
  };
}

const visibilityDatabase = (database: string) => `${database}_visibility`;
export const clusterDatabases = (database: string) => [database, visibilityDatabase(database)];

async function sqlTool(bin: TemporalServerBinaries, pg: PgServer, database: string, args: string[]): Promise<void> {
  const full = [
    '--plugin',
    'postgres12',
    '--ep',
    pg.host,
    '-p',
    String(pg.port),
    '-u',
    pg.user,
    '--db',
    database,
    ...args,
  ];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(bin.sqlTool, full, {
      env: { ...process.env, SQL_PASSWORD: pg.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`temporal-sql-tool ${args.join(' ')} on ${database} failed (exit ${code}):\n${out.slice(-3000)}`),
          ),
    );
  });
}

/**
 * Creates the server's databases on first start (`create-database`, `setup-schema -v 0.0`), then brings both schemas
 * to the newest version the server ships (`update-schema`, which does nothing when they are current).
 */
export async function migrateClusterDatabases(
  bin: TemporalServerBinaries,
  serverUrl: string,
  database: string,
  log: (line: string) => void,
): Promise<void> {
  const pg = pgServerOf(serverUrl);
  const schemas = [
    [database, join(bin.moduleDir, 'schema/postgresql/v12/temporal/versioned')],
    [visibilityDatabase(database), join(bin.moduleDir, 'schema/postgresql/v12/visibility/versioned')],
  ] as const;
  for (const [name, schemaDir] of schemas) {
    if (!(await databaseExists(serverUrl, name))) {
      log(`Temporal: creating database ${name}`);
      await sqlTool(bin, pg, name, ['create-database']);
      await sqlTool(bin, pg, name, ['setup-schema', '-v', '0.0']);
    }
    await sqlTool(bin, pg, name, ['update-schema', '-d', schemaDir]);
  }
}

const sqlStore = (pg: PgServer, database: string, maxConns: number, maxIdleConns: number) => `
      sql:
        pluginName: "postgres12"
        databaseName: ${JSON.stringify(database)}
        connectAddr: ${JSON.stringify(`${pg.host}:${pg.port}`)}
        connectProtocol: "tcp"
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxIdleConns}
        maxConnLifetime: "1h"`;

const service = (grpcPort: number, membershipPort: number, extra = '') => `
    rpc:
      grpcPort: ${grpcPort}
      membershipPort: ${membershipPort}
      bindOnIP: ${JSON.stringify('127.0.0.1')}${extra}`;

/**
 * The server's static config (the module cache's config/development-postgres12.yaml with this deployment's ports and
 * databases, pprof off, metrics off unless a port is given) and its dynamic config, under `<rootDir>/config`. Its
 * connection pools are much smaller than that file's (20 + 2, idle ones kept): each of the four services in the
 * process has its own pools, so that file's settings hold 30-50 of PostgreSQL's default 100 connections, which the
 * orchestrator, the sandbox and, on a development machine, other runs share. 5 + 2 per service keep up with the
 * benchmarks on 2 cores.
 */
export function writeServerConfig(rootDir: string, cluster: ClusterConfig, serverUrl: string): void {
  const pg = pgServerOf(serverUrl);
  const p = cluster.ports;
  const configDir = join(rootDir, 'config');
  mkdirSync(configDir, { recursive: true });
  const dynamicConfig = join(configDir, 'dynamicconfig.yaml');
  const metrics = cluster.metricsPort
    ? `
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "127.0.0.1:${cluster.metricsPort}"`
    : '';
  writeFileSync(
    join(configDir, 'development.yaml'),
    `# Written by scripts/cluster/temporal-cluster.ts at every start; edit the settings there.
log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${sqlStore(pg, cluster.database, 5, 2)}
    postgres-visibility:${sqlStore(pg, visibilityDatabase(cluster.database), 2, 1)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  pprof:
    port: 0${metrics}

services:
  frontend:${service(p.frontend, p.frontendMembership, `\n      httpPort: ${p.frontendHttp}`)}
  history:${service(p.history, p.historyMembership)}
  matching:${service(p.matching, p.matchingMembership)}
  worker:${service(p.worker, p.workerMembership)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "${cluster.frontendHost}:${p.frontend}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: ${JSON.stringify(dynamicConfig)}
  pollInterval: "10s"
`,
  );
  // What the dev server sets too: search attributes registered a moment ago are usable at once, and workflow updates
  // (the agent-compatible /tx/create waits on one) are accepted.
  const dynamic = {
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    'frontend.enableUpdateWorkflowExecution': true,
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
    'system.enableEagerWorkflowStart': true,
  };
  writeFileSync(
    dynamicConfig,
    Object.entries(dynamic)
      .map(([k, v]) => `${k}:\n  - value: ${v}\n    constraints: {}\n`)
      .join(''),
  );
}

/** The command that runs the server with the config `writeServerConfig` wrote. */
export const serverCommand = (bin: TemporalServerBinaries, rootDir: string): string[] => [
  bin.server,
  '--root',
  rootDir,
  '--config',
  'config',
  '--env',
  'development',
  '--allow-no-auth',
  'start',
];

/** Builds what is missing, migrates the databases and writes the config: everything before the server starts. */
export async function prepareTemporalCluster(opts: {
  cluster: ClusterConfig;
  serverUrl: string;
  rootDir: string;
  log: (line: string) => void;
}): Promise<string[]> {
  const bin = await ensureTemporalServer(opts.log);
  await migrateClusterDatabases(bin, opts.serverUrl, opts.cluster.database, opts.log);
  writeServerConfig(opts.rootDir, opts.cluster, opts.serverUrl);
  return serverCommand(bin, opts.rootDir);
}

async function retry<T>(
  what: string,
  run: () => Promise<T>,
  timeoutMs: number,
  isStopped: () => boolean = () => false,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if (isStopped()) throw new Error('stopped');
      if (Date.now() > deadline)
        throw new Error(`${what} did not succeed within ${timeoutMs / 1000} s: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const GRPC_ALREADY_EXISTS = 6;

/**
 * Waits for the frontend, then registers the namespace (3 days' retention, as the dev server) and the project's search
 * attributes when they are missing, and waits until the namespace serves requests.
 */
export async function initTemporalCluster(
  address: string,
  namespace: string,
  opts: { timeoutMs?: number; isStopped?: () => boolean } = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const connection = await retry(
    'the Temporal frontend',
    async () => {
      const c = await Connection.connect({ address, connectTimeout: '1s' });
      try {
        await c.workflowService.getSystemInfo({});
        return c;
      } catch (e) {
        await c.close();
        throw e;
      }
    },
    timeoutMs,
    opts.isStopped,
  );
  try {
    await retry(
      'registering the namespace',
      async () => {
        try {
          await connection.workflowService.registerNamespace({
            namespace,
            workflowExecutionRetentionPeriod: msToTs('3 days'),
          });
        } catch (e) {
          if ((e as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw e;
        }
      },
      timeoutMs,
      opts.isStopped,
    );
    const types = temporal.api.enums.v1.IndexedValueType;
    await retry(
      'registering the search attributes',
      async () => {
        const existing = await connection.operatorService.listSearchAttributes({ namespace });
        const missing = ALL_SEARCH_ATTRIBUTES.filter((k) => !existing.customAttributes[k.name]);
        if (missing.length === 0) return;
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(
            missing.map((k) => [k.name, types[`INDEXED_VALUE_TYPE_${k.type}` as keyof typeof types]]),
          ),
        });
      },
      timeoutMs,
      opts.isStopped,
    );
    await retry(
      'the namespace',
      () => connection.workflowService.countWorkflowExecutions({ namespace, query: '' }),
      timeoutMs,
      opts.isStopped,
    );
  } finally {
    await connection.close();
  }
}

/**
 * The Temporal UI server's config: the frontend, the port, and the internal API's codec endpoint, so the UI shows
 * decrypted payloads as the dev server's embedded UI does.
 */
export async function prepareTemporalUi(opts: {
  rootDir: string;
  address: string;
  port: number;
  codecEndpoint: string;
  namespace: string;
  log: (line: string) => void;
}): Promise<string[]> {
  const server = await ensureTemporalUiServer(opts.log);
  const configDir = join(opts.rootDir, 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'development.yaml'),
    `# Written by scripts/cluster/temporal-cluster.ts at every start.
temporalGrpcAddress: ${JSON.stringify(opts.address)}
host: "127.0.0.1"
port: ${opts.port}
enableUi: true
defaultNamespace: ${JSON.stringify(opts.namespace)}
notifyOnNewVersion: false
refreshInterval: 1m
cors:
  cookieInsecure: true
  allowOrigins:
    - ${JSON.stringify(`http://localhost:${opts.port}`)}
    - ${JSON.stringify(`http://127.0.0.1:${opts.port}`)}
codec:
  endpoint: ${JSON.stringify(opts.codecEndpoint)}
`,
  );
  return [server, '--root', opts.rootDir, '--config', 'config', '--env', 'development', 'start'];
}
