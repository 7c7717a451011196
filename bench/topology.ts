/**
 * What the transfer benchmarks run on, shared by bench/transfers.ts and bench/incoming.ts: the Temporal dev server or
 * the Temporal server on PostgreSQL (`--cluster` or BENCH_TEMPORAL=cluster, prepared as `npm run start:cluster`
 * prepares it), the sandbox in its own process, the API in the bench's process and N worker processes
 * (`npm run worker`) on one task queue, and the CPU each of those processes (and PostgreSQL's backends serving the
 * run's databases) used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { NetworkClient } from '../network/client';
import { loadTransferConfig, type TransferConfig } from '../outgoing/config';
import { createTransferContext, type TransferContext } from '../outgoing/context';
import { loadIncomingConfig, type IncomingConfig } from '../incoming/config';
import type { WebhookConfig } from '../webhooks/config';
import { loadDepositConfig, type DepositConfig } from '../deposits/config';
import { buildApi } from '../client/api/server';
import { createApiKey } from '../client/api/auth/api-keys';
import { ROLES, systemPrincipal, type Role } from '../lib/principal';
import { backendPids } from '../db/database-url';
import { cpuOfEach, cpuSeconds, cpuUsedBetween } from './cpu';
import { assertBuildCurrent, benchBuild, entryArgs } from './launch';
import { LocalKeyWrapper, openKeystore } from '../keys';
import { createPool } from '../db/pool';
import { loadTracesSampler, type GroupConfig, type NetworkConfig } from '../config';
import { EncryptionCodec } from '../lib/temporal/codec';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { Seed } from '../sandbox/seed';
import clusterGlobalSetup, {
  clusterDatabaseNames,
  clusterGlobalTeardown,
  clusterServerPid,
  useClusterRun,
} from '../test/harness/cluster';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { testEnv } from '../test/harness/platform';
import { startTracing, type Tracing } from '../lib/tracing';
import { registry } from '../lib/metrics/registry';
import { startMetricsListener, type MetricsListener } from '../lib/metrics/server';

export interface BenchOptions {
  cluster: boolean;
  /** Worker process counts to measure one after the other (BENCH_WORKERS=1,2 or --workers=1,2). */
  workerCounts: number[];
}

export function benchOptions(argv = process.argv.slice(2), env = process.env): BenchOptions {
  const flag = (name: string) => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const cluster = !!flag('cluster') || env.BENCH_TEMPORAL === 'cluster';
  const workersRaw = flag('workers')?.split('=')[1] ?? env.BENCH_WORKERS ?? '1';
  const workerCounts = workersRaw.split(',').map(Number);
  if (workerCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 8))
    throw new Error(`--workers / BENCH_WORKERS: "${workersRaw}" is not a list of counts from 1 to 8`);
  return { cluster, workerCounts };
}

/** The Temporal dev server's pid, found by the port it listens on. */
function devServerPid(): number | undefined {
  const port = testEnv().temporalAddress.split(':').pop();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes('start-dev') && cmd.includes(`--port\u0000${port}`)) return Number(entry);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

export interface BenchTemporal {
  label: string;
  temporalPid(): number | undefined;
  /** PostgreSQL backends serving the run's databases (the orchestrator's and sandbox's, and the cluster's). */
  postgresPids(): Promise<number[]>;
  teardown(): Promise<void>;
}

/** The test harness's run (database, codec key, workflow bundle) on the dev server or on the cluster. */
export async function setupBenchTemporal(opts: BenchOptions): Promise<BenchTemporal> {
  if (opts.cluster) {
    await clusterGlobalSetup();
    useClusterRun();
  } else {
    await globalSetup();
  }
  const databases = [new URL(testEnv().databaseUrl).pathname.slice(1), ...(opts.cluster ? clusterDatabaseNames() : [])];
  const serverUrl = (() => {
    const u = new URL(testEnv().databaseUrl);
    u.pathname = '';
    return u.toString().replace(/\/$/, '');
  })();
  return {
    label: opts.cluster ? 'Temporal server v1.29.1 on PostgreSQL' : 'Temporal dev server (SQLite in memory)',
    temporalPid: opts.cluster ? clusterServerPid : devServerPid,
    postgresPids: () => backendPids(serverUrl, databases),
    teardown: opts.cluster ? clusterGlobalTeardown : globalTeardown,
  };
}

/** A TCP port free on loopback now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/**
 * An OTLP/HTTP collector standing in for the operator's: a child process (its CPU is not the orchestrator's) that
 * answers every export 200 and counts the spans it received.
 */
export async function spawnCollectorSink(): Promise<{ url: string; spans(): Promise<number>; close(): Promise<void> }> {
  const port = await freePort();
  const code = `
    let spans = 0;
    require('node:http').createServer((req, res) => {
      if (req.method === 'GET') return res.end(String(spans));
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        try { spans += (body.match(/"spanId"/g) || []).length; } catch {}
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    }).listen(${port}, '127.0.0.1');`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 100) throw new Error('the collector sink did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    spans: async () => Number(await (await fetch(url)).text()),
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * `npm run sandbox` as a child process on a free port, seeded with the bench's group; with `testToken`, its `/sandbox/*`
 * test routes are on behind that bearer token (simulated counterparties and transfers).
 */
export async function spawnSandbox(
  seed: Seed,
  opts: { testToken?: string } = {},
): Promise<{
  pid?: number;
  url: string;
  networkConfig(c: { clientId: string; clientSecret: string }): NetworkConfig;
  close(): Promise<void>;
}> {
  const build = benchBuild();
  if (build === 'compiled') assertBuildCurrent();
  const port = await freePort();
  const seedFile = join(tmpdir(), `bench-seed-${process.pid}-${randomUUID()}.json`);
  writeFileSync(seedFile, JSON.stringify(seed));
  const child = spawn(process.execPath, entryArgs('sandbox/main.ts', build), {
    // The benchmarks measure the orchestrator beyond the network's quota: no rate limit unless asked for.
    env: {
      ...process.env,
      DATABASE_URL: testEnv().databaseUrl,
      SANDBOX_PORT: String(port),
      SANDBOX_SEED: seedFile,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      SANDBOX_RATE_LIMIT: process.env.SANDBOX_RATE_LIMIT ?? 'off',
      ...(opts.testToken && { SANDBOX_TEST_ROUTES: '1', SANDBOX_OPERATOR_TOKEN: opts.testToken }),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 300) throw new Error('the sandbox did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    url,
    networkConfig: (c) => ({
      authUrl: url,
      audience: url,
      baseUrl: url,
      audiencePii: `${url}/pii`,
      baseUrlPii: `${url}/pii`,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
    }),
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(seedFile, { force: true });
    },
  };
}

export interface ApiWithWorkers {
  apiUrl: string;
  /** `Authorization` with an API key of the role (admin unless given), plus `extra` headers. */
  headers(role?: Role, extra?: Record<string, string>): Record<string, string>;
  transfers: TransferContext;
  /** The webhooks' secrets the API checks (a bench adds an endpoint's secret once it has registered it). */
  webhooks: WebhookConfig;
  workerPids: (number | undefined)[];
  /** The /metrics of the API and of each worker (and its Temporal SDK's), when `observability.metrics` is on. */
  metricsUrls?: string[];
  close(): Promise<void>;
}

/**
 * Metrics and tracing of the run's processes, as an operator turns them on: every /metrics listener
 * (METRICS_PORT, WORKER_METRICS_PORT, TEMPORAL_SDK_METRICS_PORT) or none (`off`), and OTEL_EXPORTER_OTLP_ENDPOINT.
 * Absent: the workers inherit the environment, and the API in this process neither serves metrics nor traces.
 */
export interface BenchObservability {
  metrics: boolean;
  otlpEndpoint?: string;
}

/** The internal API in this process and `workers` × `npm run worker` as child processes on one task queue and database. */
export async function apiWithWorkerProcesses(opts: {
  network: NetworkConfig;
  group: GroupConfig;
  agentKeys: string;
  transfers: Partial<TransferConfig>;
  incoming?: Partial<IncomingConfig>;
  /** Reported deposits' settings over the defaults: the API starts each deposit's workflow with them. */
  deposits?: Partial<DepositConfig>;
  webhooks?: Pick<WebhookConfig, 'notification'>;
  workers: number;
  /** The keystore's master key: the same for every start on one database (the agent's keys are stored under it). */
  masterKey: string;
  observability?: BenchObservability;
  /** Settings the worker processes get over the bench's environment (bench:transfers' variant rounds). */
  workerEnv?: Record<string, string>;
  /**
   * The API's tracing when this process runs two APIs side by side (bench:transfers' paired rounds): the process's
   * one tracing for the traced API, or undefined for the API that is not; its shutdown stays with the caller. Absent:
   * the API starts its own from `observability` and stops it on close.
   */
  apiTracing?: { shared: Tracing | undefined };
}): Promise<ApiWithWorkers> {
  const build = benchBuild();
  if (build === 'compiled') assertBuildCurrent();
  const env = testEnv();
  const taskQueue = `bench-${randomUUID()}`;
  const masterKey = opts.masterKey;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-transfers-'));
  // BENCH_WORKER_NODE_ARGS: extra node flags for the workers, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const { network, group, transfers: settings, observability } = opts;
  const metricsUrls: string[] = [];
  const observabilityEnv = async (): Promise<Record<string, string>> => {
    if (!observability) return {};
    if (!observability.metrics) {
      return {
        WORKER_METRICS_PORT: 'off',
        TEMPORAL_SDK_METRICS_PORT: 'off',
        OTEL_EXPORTER_OTLP_ENDPOINT: observability.otlpEndpoint ?? '',
      };
    }
    const [own, sdk] = [await freePort(), await freePort()];
    metricsUrls.push(`http://127.0.0.1:${own}/metrics`, `http://127.0.0.1:${sdk}/metrics`);
    return {
      WORKER_METRICS_PORT: String(own),
      TEMPORAL_SDK_METRICS_PORT: String(sdk),
      OTEL_EXPORTER_OTLP_ENDPOINT: observability.otlpEndpoint ?? '',
    };
  };
  const workerEnvs = [];
  for (let i = 0; i < opts.workers; i++) workerEnvs.push({ ...(await observabilityEnv()), ...opts.workerEnv });
  const workers: ChildProcess[] = workerEnvs.map((extraEnv) =>
    spawn(process.execPath, [...nodeArgs, ...entryArgs('workers/main.ts', build)], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        DATABASE_URL: env.databaseUrl,
        TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        CLIENT_ID: network.clientId,
        CLIENT_SECRET: network.clientSecret,
        AUTH_URL: network.authUrl,
        BASE_URL: network.baseUrl,
        BASEURL_PII: network.baseUrlPii,
        KEYS: opts.agentKeys,
        KEYSTORE_MASTER_KEY: masterKey,
        GATEWAY_VASP_DID: group.gatewayDid,
        SUBSIDIARY_VASP_DIDS: group.subsidiaryDids.join(','),
        TRANSFER_CALLBACK_URL: settings.callbackUrl,
        TRANSFER_POLL_INTERVAL: `${settings.pollIntervalMs ?? 600_000}ms`,
        TRANSFER_ANSWER_DEADLINE: `${settings.answerDeadlineMs ?? 3_600_000}ms`,
        KEY_ROTATION_PERIOD: 'off',
        ADDRESS_BOOK_CRON: 'off',
        INCOMING_POLL_INTERVAL: opts.incoming?.pollInterval ?? '5m',
        RETENTION_CRON: 'off',
        // As the sandbox's quota is off (spawnSandbox), so is the group's budget: the benchmarks measure the orchestrator,
        // and the network's real quota (20 calls/s) would cap the incoming flow at about 5 transfers/s.
        NETWORK_RATE_LIMIT: process.env.NETWORK_RATE_LIMIT ?? 'off',
        ...extraEnv,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  // On stderr, beside the report: which processes serve which task queue, to find one left running.
  process.stderr.write(`bench: worker pids ${workers.map((w) => w.pid).join(', ')} on task queue ${taskQueue}\n`);
  const pool = createPool(env.databaseUrl, 'orchestrator');
  const keystore = await openKeystore(pool, { masterKey, dataDir, agentKeys: opts.agentKeys });
  const transfers = createTransferContext({
    pool,
    network: new NetworkClient(network),
    keystore,
    keyWrapper: new LocalKeyWrapper(Buffer.from(masterKey, 'base64')),
    config: { ...loadTransferConfig({}), ...settings },
    group,
    logger: pino({ level: 'silent' }),
  });
  // The API in this process: traced as client/api-process.ts traces it, its /metrics as client/metrics.ts serves it.
  const tracing = opts.apiTracing
    ? opts.apiTracing.shared
    : startTracing({ otlpEndpoint: observability?.otlpEndpoint, process: 'api', sampler: loadTracesSampler() });
  let apiMetrics: MetricsListener | undefined;
  if (observability?.metrics) {
    apiMetrics = await startMetricsListener(registry, '127.0.0.1', 0);
    metricsUrls.push(`http://127.0.0.1:${apiMetrics.port}/metrics`);
  }
  const connection = await Connection.connect({ address: env.temporalAddress });
  const client = new Client({
    connection,
    dataConverter: createDataConverter(env.keyring),
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  const webhooks: WebhookConfig = { notification: { ...opts.webhooks?.notification }, address: {} };
  const api = await buildApi({
    temporal: client,
    pool,
    codec: new EncryptionCodec(env.keyring),
    taskQueue,
    logger: pino({ level: 'silent' }),
    corsOrigins: [],
    keystore,
    group,
    transfers,
    incoming: { ...loadIncomingConfig({}), ...opts.incoming },
    deposits: { ...loadDepositConfig({}), ...opts.deposits },
    webhooks,
    // The sandbox's webhooks all come from 127.0.0.1: a limit would measure itself, not the system.
    rateLimits: {
      webhooks: { max: 10_000_000, windowMs: 60_000 },
      authFailures: { max: 10_000_000, windowMs: 60_000 },
    },
    tracing: tracing !== undefined,
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const keys = {} as Record<Role, string>;
  for (const role of ROLES)
    keys[role] = (await createApiKey(pool, { name: `bench-${role}`, role }, systemPrincipal('bench'))).key;
  // Each worker is ready once it has taken a first workflow task: run connectivity checks until every one has.
  await Promise.all(
    Array.from({ length: opts.workers * 2 }, () =>
      client.workflow.execute('connectivityCheck', { taskQueue, workflowId: `bench-ready-${randomUUID()}` }),
    ),
  );
  return {
    apiUrl: `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`,
    headers: (role = 'admin', extra = {}) => ({ authorization: `Bearer ${keys[role]}`, ...extra }),
    transfers,
    webhooks,
    workerPids: workers.map((w) => w.pid),
    metricsUrls,
    close: async () => {
      await api.close();
      await apiMetrics?.close();
      if (!opts.apiTracing) await tracing?.shutdown();
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : undefined)));
      await connection.close();
      await pool.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU seconds used so far by each process of the run, and by each PostgreSQL backend serving its databases. */
export interface CpuSnapshot {
  processes: Record<string, number | undefined>;
  postgres: Map<number, number>;
}

export async function cpuSnapshot(parts: {
  temporal: BenchTemporal;
  workerPids: (number | undefined)[];
  sandboxPid?: number;
}): Promise<CpuSnapshot> {
  const self = process.cpuUsage();
  const processes: CpuSnapshot['processes'] = {
    'API+bench': (self.user + self.system) / 1e6,
    temporal: cpuSeconds(parts.temporal.temporalPid()),
    sandbox: cpuSeconds(parts.sandboxPid),
  };
  parts.workerPids.forEach((pid, i) => (processes[`worker ${i + 1}`] = cpuSeconds(pid)));
  return { processes, postgres: cpuOfEach(await parts.temporal.postgresPids()) };
}

/**
 * CPU ms per transfer of each process between two snapshots. PostgreSQL: its backends serving the run's databases
 * (bench/cpu.ts cpuUsedBetween); the server's shared processes (WAL writer, checkpointer) are not included.
 */
export function cpuPerTransfer(
  before: CpuSnapshot,
  after: CpuSnapshot,
  transfers: number,
): Record<string, number | undefined> {
  const per = (seconds: number) => (seconds * 1000) / Math.max(1, transfers);
  const out: Record<string, number | undefined> = {};
  for (const [key, a] of Object.entries(after.processes)) {
    const b = before.processes[key];
    out[key] = a === undefined || b === undefined ? undefined : per(a - b);
  }
  out.PostgreSQL = per(cpuUsedBetween(before.postgres, after.postgres));
  return out;
}
