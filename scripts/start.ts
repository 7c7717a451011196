import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { loadClusterConfig, loadConfig, type PlatformConfig } from '../config';
import { ConfigError } from '../lib/errors';
import { loadCodecKeyring } from '../lib/temporal/codec-keys';
import { searchAttributeCliArgs } from '../lib/temporal/search-attributes';
import { ensureDatabase } from '../db/database-url';
import { migrate } from '../db/migrate';
import { resolveDatabaseServer, type DatabaseServer } from '../db/server';
import { installationNames } from './installation';
import { readSeedFile } from '../sandbox/seed';
import type { SandboxTestRoutes } from '../sandbox/nested-routing/simulate-client';
import { loadOrCreateDemoGroup, type DemoGroup, type DevCredential } from './demo-group';
import { devCredentials } from './dev-credentials';
import { DEFAULT_OPERATOR_AUDIENCE } from '../sandbox/auth/operator-issuer';
import { operatorIssuerUrl } from '../sandbox/server';
import { ROLES, type Role } from '../lib/principal';
import {
  demoKeys,
  prepareDemoNetwork,
  seedDemoData,
  seedDemoPolicy,
  sendDemoIncoming,
  sendDemoOutgoing,
} from './demo-network';
import { ensureTemporalCli } from './temporal-cli';
import { initTemporalCluster, prepareTemporalCluster, prepareTemporalUi } from './cluster/temporal-cluster';
import { connectTemporal } from '../lib/temporal/connect';

/** The console's client id at the sandbox's identity provider. */
const DEMO_CONSOLE_CLIENT_ID = 'travel-rule-console';

/**
 * `npm start`: Postgres, Temporal (dev server with a file database), the sandbox, the worker and the API, a seeded
 * demo VASP group, one demonstration workflow, then the URLs. Each process logs to `.data/logs/<name>.log`; Ctrl-C
 * stops everything this script started, and a second start reuses `.data/`.
 *
 * `npm run start:cluster` (`--cluster`): the same, in a data directory of its own (`.data/cluster/` unless DATA_DIR is
 * set), but Temporal is the real server on PostgreSQL (its own databases,
 * migrated at every start), with the Temporal UI server beside it and `WORKER_PROCESSES` workers (2 by default).
 * `--all-in-one`: the API and a worker run as one process (workers/all-in-one.ts), which starts transfers eagerly.
 */
const clusterMode = process.argv.includes('--cluster');
const allInOne = process.argv.includes('--all-in-one');
const root = resolve(__dirname, '..');
const say = (line: string) => process.stdout.write(`${line}\n`);
const children: { name: string; child: ChildProcess }[] = [];
let stopping = false;
let database: DatabaseServer | undefined;

function spawnProcess(name: string, args: string[], env: Record<string, string>, logDir: string): ChildProcess {
  const log = createWriteStream(resolve(logDir, `${name}.log`), { flags: 'a' });
  const child = spawn(args[0]!, args.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  child.stdout!.pipe(log);
  let lastErr = '';
  child.stderr!.on('data', (d: Buffer) => {
    lastErr = (lastErr + d.toString()).slice(-2000);
    log.write(d);
  });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(
      `\n${name} exited (${signal ?? `code ${code}`}). ${lastErr.trim().split('\n').slice(-5).join('\n')}\nSee ${logDir}/${name}.log\n`,
    );
    void shutdown(1);
  });
  children.push({ name, child });
  return child;
}

/**
 * How a process of the stack runs: from source through tsx for development; in cluster mode, the production topology,
 * from `npm run build`'s compiled JavaScript (built at start) with its prebuilt workflow bundle.
 */
const entryArgs = clusterMode
  ? (entry: string) => [process.execPath, '--enable-source-maps', resolve(root, 'dist', entry.replace(/\.ts$/, '.js'))]
  : (entry: string) => [process.execPath, resolve(root, 'node_modules/tsx/dist/cli.mjs'), resolve(root, entry)];

function build(): void {
  say('Building (npm run build: dist/ and the workflow bundle)…');
  const r = spawnSync(process.execPath, [resolve(root, 'scripts/build.cjs')], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error('npm run build failed; see the output above');
}

async function portInUse(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function assertFree(variable: string, host: string, port: number, alternative = ''): Promise<void> {
  if (await portInUse(host, port)) {
    throw new ConfigError(
      variable,
      `port ${port} is already in use`,
      `Stop the process using it${alternative ? `, ${alternative}` : ` or set ${variable} to a free port`}`,
    );
  }
}

/**
 * Every port this start listens on, checked before anything is built or created, so that a second clone started
 * beside a running one stops at once, naming the variable to set. (Each clone's databases and data are its own:
 * scripts/installation.ts.)
 */
async function assertPortsFree(config: PlatformConfig): Promise<void> {
  for (const [name, port] of [
    ['PORT', config.apiPort],
    ['SANDBOX_PORT', config.sandboxPort],
  ] as const)
    await assertFree(name, '127.0.0.1', port);
  // The API's /metrics listener (0: a free port; off: none), on its own host.
  const { metricsHost, apiMetricsPort } = config.observability;
  if (apiMetricsPort) await assertFree('METRICS_PORT', metricsHost, apiMetricsPort, 'or set METRICS_PORT to 0 or off');
  if (clusterMode) {
    for (const [key, port] of Object.entries(loadClusterConfig().ports)) {
      await assertFree(
        key === 'frontend' ? 'TEMPORAL_ADDRESS' : `the Temporal ${key} port`,
        '127.0.0.1',
        port,
        "or move them all with TEMPORAL_ADDRESS's port (the others are offsets from it)",
      );
    }
  } else if (!process.env.TEMPORAL_ADDRESS || process.env.START_TEMPORAL === '1') {
    const [host, portText] = config.temporal.address.split(':');
    await assertFree(
      'TEMPORAL_ADDRESS',
      host!,
      Number(portText),
      'or set TEMPORAL_ADDRESS to a free port with START_TEMPORAL=1 (without it, npm start uses the server there, with its namespace and task queue)',
    );
  } else {
    return;
  }
  await assertFree('TEMPORAL_UI_PORT', '127.0.0.1', config.temporal.uiPort);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (stopping) throw new Error('stopped');
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const httpOk = (url: string) => async () => (await fetch(url)).ok;

async function startDevServer(config: PlatformConfig, logDir: string): Promise<{ address: string; uiUrl?: string }> {
  // TEMPORAL_ADDRESS names a server to use, unless START_TEMPORAL=1 asks for the dev server there (a second npm start
  // beside another, or a test).
  if (process.env.TEMPORAL_ADDRESS && process.env.START_TEMPORAL !== '1') {
    const connection = await connectTemporal(Connection, config.temporal);
    await connection.close();
    say(`Temporal: using the server at ${config.temporal.address} (TEMPORAL_ADDRESS)`);
    return { address: config.temporal.address };
  }
  const [host, portText] = config.temporal.address.split(':');
  await assertFree('TEMPORAL_ADDRESS', host!, Number(portText), 'or set TEMPORAL_ADDRESS to that server to use it');
  const cli = await ensureTemporalCli(say);
  spawnProcess(
    'temporal',
    [
      cli,
      'server',
      'start-dev',
      '--db-filename',
      resolve(root, config.dataDir, 'temporal.db'),
      '--ip',
      host!,
      '--port',
      portText!,
      '--ui-port',
      String(config.temporal.uiPort),
      '--ui-codec-endpoint',
      `${config.publicApiUrl}/codec`,
      '--namespace',
      config.temporal.namespace,
      '--log-level',
      'warn',
      ...searchAttributeCliArgs(),
    ],
    {},
    logDir,
  );
  await waitFor(
    'Temporal',
    async () => {
      const c = await Connection.connect({ address: config.temporal.address, connectTimeout: '1s' });
      try {
        await c.workflowService.getSystemInfo({});
        return true;
      } finally {
        await c.close();
      }
    },
    120_000,
  );
  return { address: config.temporal.address, uiUrl: `http://localhost:${config.temporal.uiPort}` };
}

/** The Temporal server on PostgreSQL (databases `TEMPORAL_CLUSTER_DATABASE` and its `_visibility`) and the UI server. */
async function startCluster(
  config: PlatformConfig,
  serverUrl: string,
  logDir: string,
  dataDir: string,
): Promise<{ address: string; uiUrl?: string }> {
  const cluster = loadClusterConfig();
  for (const [key, port] of Object.entries(cluster.ports)) {
    await assertFree(
      key === 'frontend' ? 'TEMPORAL_ADDRESS' : `the Temporal ${key} port`,
      '127.0.0.1',
      port,
      'or set the TEMPORAL_*_PORT variables (see docs/operations.md)',
    );
  }
  await assertFree('TEMPORAL_UI_PORT', '127.0.0.1', config.temporal.uiPort);
  const command = await prepareTemporalCluster({
    cluster,
    serverUrl,
    rootDir: resolve(dataDir, 'temporal-cluster/server'),
    log: say,
  });
  spawnProcess('temporal', command, {}, logDir);
  await initTemporalCluster(config.temporal.address, config.temporal.namespace, { isStopped: () => stopping });
  say(
    `Temporal: server ${config.temporal.address} on PostgreSQL (databases ${cluster.database}, ${cluster.database}_visibility)`,
  );
  const ui = await prepareTemporalUi({
    rootDir: resolve(dataDir, 'temporal-cluster/ui'),
    address: config.temporal.address,
    port: config.temporal.uiPort,
    codecEndpoint: `${config.publicApiUrl}/codec`,
    namespace: config.temporal.namespace,
    log: say,
  });
  spawnProcess('temporal-ui', ui, {}, logDir);
  const uiUrl = `http://localhost:${config.temporal.uiPort}`;
  await waitFor('the Temporal UI', httpOk(`${uiUrl}/`));
  return { address: config.temporal.address, uiUrl };
}

function printBanner(
  config: PlatformConfig,
  group: DemoGroup,
  urls: { ui?: string; sandbox?: string },
  workflowId: string,
  creds: Record<Role, DevCredential>,
) {
  const api = config.publicApiUrl;
  say('');
  say('travel-rule-orchestrator is running');
  say(`  Internal API   ${api}   (health ${api}/healthz)`);
  say(`  API docs       ${api}/docs`);
  say(`  Console        ${api}/console   (the review queue)`);
  if (urls.ui) say(`  Temporal UI    ${urls.ui}/namespaces/${config.temporal.namespace}/workflows`);
  if (urls.sandbox) say(`  Sandbox        ${urls.sandbox}`);
  say('');
  say(`Demo VASP group (also in ${config.dataDir}/demo.json):`);
  say(`  gateway       ${group.gateway.name.padEnd(20)} ${group.gateway.did}`);
  for (const s of group.subsidiaries) say(`  subsidiary    ${s.name.padEnd(20)} ${s.did}`);
  say(`  counterparty  ${group.external.name.padEnd(20)} ${group.external.did}`);
  say('');
  const kind =
    creds.admin.kind === 'oidc'
      ? `access tokens of the sandbox's identity provider, valid until ${creds.admin.expiresAt}`
      : 'API keys';
  say(
    `Development credentials (${kind}; also in ${config.dataDir}/demo.json under operators), as Authorization: Bearer <token>:`,
  );
  for (const role of ROLES) say(`  ${role.padEnd(11)} ${creds[role].name.padEnd(17)} ${creds[role].token}`);
  say('');
  if (creds.admin.kind === 'oidc') {
    say(
      'Console sign-in at the sandbox\'s identity provider ("Sign in with your identity provider"), email and password:',
    );
    for (const role of ROLES)
      say(
        `  ${role.padEnd(11)} ${(group.operatorClients[role].email ?? group.operatorClients[role].clientId).padEnd(26)} ${group.operatorClients[role].clientSecret}`,
      );
  } else {
    say('Console sign-in: paste one of the credentials above.');
  }
  say('');
  say(`Demonstration workflow: ${workflowId}`);
  say(`Logs: ${config.dataDir}/logs/. Press Ctrl-C to stop.`);
}

/**
 * Seeds the demo's registry and sanctions list, sends one incoming transfer per routing path and one outgoing transfer
 * per behaviour of the simulated counterparty, and waits for them (a minute at most).
 */
async function runDemoTraffic(
  sandbox: SandboxTestRoutes,
  apiUrl: string,
  databaseUrl: string,
  group: DemoGroup,
  creds: Record<Role, DevCredential>,
) {
  await seedDemoData(sandbox.url, { url: apiUrl, token: creds.operator.token }, databaseUrl, group);
  await seedDemoPolicy({ url: apiUrl, token: creds.compliance.token }, group);
  const sent = await sendDemoIncoming(sandbox, group);
  const sentOut = await sendDemoOutgoing({ url: apiUrl, token: creds.operator.token }, group);
  const names = new Map([group.gateway, ...group.subsidiaries].map((v) => [v.did, v.name]));
  const outgoing = Promise.all(
    sentOut.map(async (d) => {
      let outcome = 'still running (see the Temporal UI)';
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !stopping) {
        const r = await fetch(`${apiUrl}/v1/transfers/${encodeURIComponent(d.id)}`, {
          headers: { authorization: `Bearer ${creds.viewer.token}` },
        });
        if (r.ok) {
          const s = (await r.json()) as { status: string; final: boolean };
          if (s.final || s.status === d.reaches) {
            outcome = s.final
              ? s.status
              : `${s.status}, waiting for a final answer until the deadline (TRANSFER_ANSWER_DEADLINE)`;
            if (s.final || !d.final) break;
          }
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      return { ...d, outcome };
    }),
  );
  const incoming = Promise.all(
    sent.map(async (d) => {
      let outcome = 'still running (see the Temporal UI)';
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !stopping) {
        const r = await fetch(`${apiUrl}/v1/incoming-transfers/${d.id}`, {
          headers: { authorization: `Bearer ${creds.viewer.token}` },
        });
        if (r.ok) {
          const s = (await r.json()) as { phase: string; networkStatus: string; subsidiaryDid?: string };
          const at = s.subsidiaryDid ? (names.get(s.subsidiaryDid) ?? s.subsidiaryDid) : 'the gateway';
          if (s.phase === 'completed' || s.phase === 'awaiting-review') {
            outcome =
              s.phase === 'completed'
                ? `${s.networkStatus} at ${at}`
                : `held for review at ${at} (POST /v1/transfers/${d.id}/decision)`;
            break;
          }
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      return { ...d, outcome };
    }),
  );
  return { incoming: await incoming, outgoing: await outgoing };
}

async function shutdown(code: number): Promise<never> {
  if (stopping) return new Promise(() => undefined);
  stopping = true;
  for (const { child } of [...children].reverse()) {
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        r();
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
  await database?.stop().catch(() => undefined);
  process.exit(code);
}

async function main() {
  // Cluster mode is an installation of its own (data directory, databases, codec key, demo group): switching modes in
  // one clone must not show one mode's transfers in the other, whose Temporal does not hold their workflows.
  if (clusterMode) process.env.DATA_DIR ||= '.data/cluster';
  const config = loadConfig();
  const dataDir = resolve(root, config.dataDir);
  const logDir = resolve(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  loadCodecKeyring(config.codecKeys, dataDir); // creates the development key on first start

  await assertPortsFree(config);

  if (clusterMode) build();
  database = await resolveDatabaseServer({ databaseUrl: config.databaseUrl, dataDir, log: say });
  // Without DATABASE_URL, the databases are this data directory's own (scripts/installation.ts).
  const names = installationNames(dataDir);
  const databaseUrl = config.databaseUrl ?? `${database.serverUrl}/${names.database}`;
  process.env.TEMPORAL_CLUSTER_DATABASE ||= names.temporalDatabase;
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, 'orchestrator');
  await migrate(databaseUrl, 'sandbox');
  say(`Postgres: ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname} (${database.source})`);

  const temporal = clusterMode
    ? await startCluster(config, database.serverUrl, logDir, dataDir)
    : await startDevServer(config, logDir);

  const { group, created } = loadOrCreateDemoGroup(resolve(dataDir, 'demo.json'));
  const seedFile = resolve(dataDir, 'sandbox-seed.json');
  // The console signs people in at the sandbox's identity provider: its redirect URI is the API's own address.
  group.seed.operatorApps = [
    {
      clientId: DEMO_CONSOLE_CLIENT_ID,
      redirectUris: [...new Set(['http://127.0.0.1/console/', `${config.publicApiUrl}/console/`])],
    },
  ];
  // A demo group made before VASPs were marked simulated: its counterparty is the sandbox's simulated one.
  group.seed.vasps = group.seed.vasps.map((v) => (v.did === group.external.did ? { ...v, simulated: true } : v));
  writeFileSync(seedFile, JSON.stringify(group.seed, null, 2), { mode: 0o600 });
  readSeedFile(seedFile);
  say(`Demo group: ${created ? 'created' : 'reused'} ${config.dataDir}/demo.json`);

  const common: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    DATA_DIR: dataDir,
    GATEWAY_VASP_DID: process.env.GATEWAY_VASP_DID ?? group.gateway.did,
    SUBSIDIARY_VASP_DIDS: process.env.SUBSIDIARY_VASP_DIDS ?? group.subsidiaries.map((s) => s.did).join(','),
  };
  let sandboxUrl: string | undefined;
  // The sandbox's test routes (the demo's simulated counterparty) answer only to this token, new at every start.
  const sandboxTestToken = randomBytes(32).toString('base64url');
  let network: Record<string, string> = {};
  if (!config.network) {
    sandboxUrl = `http://127.0.0.1:${config.sandboxPort}`;
    writeFileSync(resolve(dataDir, 'sandbox-operator-token'), `${sandboxTestToken}\n`, { mode: 0o600 });
    spawnProcess(
      'sandbox',
      entryArgs('sandbox/main.ts'),
      {
        ...common,
        SANDBOX_SEED: seedFile,
        SANDBOX_PUBLIC_URL: sandboxUrl,
        SANDBOX_TEST_ROUTES: '1',
        SANDBOX_OPERATOR_TOKEN: sandboxTestToken,
      },
      logDir,
    );
    await waitFor('the sandbox', httpOk(`${sandboxUrl}/healthz`));
    network = {
      AUTH_URL: sandboxUrl,
      BASE_URL: sandboxUrl,
      AUDIENCE: sandboxUrl,
      BASEURL_PII: `${sandboxUrl}/pii`,
      AUDIENCE_PII: `${sandboxUrl}/pii`,
      CLIENT_ID: group.gateway.credentials.clientId,
      CLIENT_SECRET: group.gateway.credentials.clientSecret,
      // Operators sign in at the sandbox's identity provider unless another is configured.
      ...(config.auth.oidc
        ? {}
        : {
            OPERATOR_AUTH_ISSUER: operatorIssuerUrl(sandboxUrl),
            OPERATOR_AUTH_AUDIENCE: DEFAULT_OPERATOR_AUDIENCE,
            OPERATOR_CONSOLE_CLIENT_ID: DEMO_CONSOLE_CLIENT_ID,
          }),
    };
    say(`Sandbox: ${sandboxUrl}`);
    const keys = demoKeys(group);
    writeFileSync(resolve(dataDir, 'demo.json'), `${JSON.stringify(group, null, 2)}\n`, { mode: 0o600 });
    network = {
      ...network,
      ...(await prepareDemoNetwork({ url: sandboxUrl, testToken: sandboxTestToken }, config.publicApiUrl, group, keys)),
    };
  } else {
    say(`Network: ${config.network.baseUrl} (BASE_URL); the sandbox is not started`);
  }

  if (allInOne) {
    // The API and a worker in one process (workers/all-in-one.ts); in cluster mode the other workers run beside it.
    spawnProcess('all-in-one', entryArgs('workers/all-in-one.ts'), { ...common, ...network }, logDir);
  }
  const workers = (clusterMode ? loadClusterConfig().workerProcesses : 1) - (allInOne ? 1 : 0);
  for (let i = 1; i <= workers; i++)
    spawnProcess(
      workers === 1 ? 'worker' : `worker-${i}`,
      entryArgs('workers/main.ts'),
      { ...common, ...network, ...workerMetricsPorts(i - 1 + (allInOne ? 1 : 0)) },
      logDir,
    );
  if (!allInOne) spawnProcess('api', entryArgs('client/main.ts'), { ...common, ...network }, logDir);
  await waitFor('the internal API', httpOk(`${config.publicApiUrl}/healthz`), 120_000);

  const creds = await devCredentials({ sandboxUrl: config.auth.oidc ? undefined : sandboxUrl, databaseUrl, group });
  group.operators = creds;
  writeFileSync(resolve(dataDir, 'demo.json'), `${JSON.stringify(group, null, 2)}\n`, { mode: 0o600 });
  const as = (role: Role) => ({ authorization: `Bearer ${creds[role].token}` });

  const started = (await (
    await fetch(`${config.publicApiUrl}/v1/checks/connectivity`, { method: 'POST', headers: as('operator') })
  ).json()) as { workflowId: string };
  await waitFor(
    'the demonstration workflow',
    async () => {
      const r = (await (
        await fetch(`${config.publicApiUrl}/v1/checks/connectivity/${started.workflowId}`, { headers: as('viewer') })
      ).json()) as { status: string };
      if (r.status === 'FAILED' || r.status === 'TERMINATED') throw new Error(`demonstration workflow ${r.status}`);
      return r.status === 'COMPLETED';
    },
    120_000,
  );

  const demo = sandboxUrl
    ? await runDemoTraffic(
        { url: sandboxUrl, testToken: sandboxTestToken },
        config.publicApiUrl,
        databaseUrl,
        group,
        creds,
      )
    : undefined;
  printBanner(config, group, { ui: temporal.uiUrl, sandbox: sandboxUrl }, started.workflowId, creds);
  if (demo) {
    say('Demo incoming transfers (filter by TransferStatus or SubsidiaryVaspDid in the Temporal UI):');
    for (const d of demo.incoming) say(`  ${d.label.padEnd(40)} incoming-${d.id}  ${d.outcome}`);
    say(
      `Demo outgoing transfers from ${group.subsidiaries[0]!.name} to ${group.external.name}, one per counterparty behaviour (GET /v1/transfers/<id>):`,
    );
    for (const d of demo.outgoing) say(`  ${d.label.padEnd(40)} ${d.workflowId}  ${d.outcome}`);
  }
  writeFileSync(
    resolve(dataDir, 'urls.json'),
    JSON.stringify({ api: config.publicApiUrl, ui: temporal.uiUrl, sandbox: sandboxUrl }, null, 2),
  );
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
main().catch((e: unknown) => {
  if (e instanceof ConfigError) process.stderr.write(`npm start: configuration error: ${e.message}\n`);
  else if ((e as Error).message !== 'stopped') process.stderr.write(`npm start: ${(e as Error).message}\n`);
  void shutdown(1);
});

/**
 * The metrics ports of the n-th worker process on this machine (0 = the first): each its own pair after the defaults
 * (9465 for /metrics, 9466 for the Temporal SDK's), unless WORKER_METRICS_PORT or TEMPORAL_SDK_METRICS_PORT is set.
 */
function workerMetricsPorts(n: number): Record<string, string> {
  if (n === 0 || process.env.WORKER_METRICS_PORT || process.env.TEMPORAL_SDK_METRICS_PORT) return {};
  return { WORKER_METRICS_PORT: String(9465 + 2 * n), TEMPORAL_SDK_METRICS_PORT: String(9466 + 2 * n) };
}
