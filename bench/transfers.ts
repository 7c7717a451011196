/**
 * `npm run bench:transfers` (issue #5): outgoing transfers driven through the internal API to their final status, next
 * to the same flow called directly without Temporal, in the same run and process.
 *
 * Set-up (the integration tests' harness): a real Temporal dev server, PostgreSQL, the sandbox over HTTP, the worker
 * and the API. Each transfer: `POST /v1/transfers` → workflow (prepare: keys from the keystore, pii_didkey from the
 * directory, encrypt every field, `POST {pii}/put`; `POST /tx/create`) → the counterparty answers → signed webhook to
 * `/webhooks/notification` → signal → final status → callback POST to the bench. Latency: from the POST to the
 * callback.
 *
 * Baseline: `runTransferDirect` (the same engine functions the activities call: store, plan, encrypt, put, create)
 * awaited in-process, completed when the counterparty's answer arrives — no API, no workflow, no signal, no callback.
 *
 * The counterparty is driven by the bench (the external VASP's credentials: `GET /tx/list?status=SENT`, then
 * `/tx/confirm` and `/tx/accept`, then the network's signed webhook to the orchestrator), because the sandbox's own
 * simulator and webhook dispatcher poll every 200 ms in batches of 20, which would measure the sandbox rather than the
 * orchestration. Both paths share that driver.
 *
 * Knobs: BENCH_TRANSFERS (default 1000 per path), BENCH_CONCURRENCY (transfers in flight, default 64),
 * BENCH_FIELDS=small|40 (the personal data: a typical 9-field record, or the 40-field fixture).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NetworkClient } from '../activities/network/network-client';
import { runTransferDirect, type NetworkTransaction } from '../activities/transfers/engine';
import type { OutgoingTransferBody } from '../activities/transfers/request';
import { createDidKeyRecord } from '../lib/crypto';
import { webhookHeaders } from '../lib/webhook-signature';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { createTransferContext, loadTransferConfig, type TransferConfig, type TransferContext } from '../activities/transfers';
import { buildApi } from '../client/api/server';
import { createPool } from '../db/pool';
import type { GroupConfig, NetworkConfig } from '../lib/config';
import { LocalKeyWrapper, openKeystore } from '../db/keystore';
import { EncryptionCodec } from '../lib/temporal/codec';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { Seed } from '../sandbox/seed';
import { groupSeed, startOrchestrator, startSandbox, testEnv } from '../test/harness/platform';
import { quantile } from './stats';

/** `npm run sandbox` as a child process on a free port, seeded with the bench's group. */
async function spawnSandbox(seed: Seed): Promise<{ pid?: number; networkConfig(c: { clientId: string; clientSecret: string }): NetworkConfig; close(): Promise<void> }> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const seedFile = join(tmpdir(), `bench-seed-${process.pid}.json`);
  writeFileSync(seedFile, JSON.stringify(seed));
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'sandbox', 'main.ts')], {
    env: { ...process.env, DATABASE_URL: testEnv().databaseUrl, SANDBOX_PORT: String(port), SANDBOX_SEED: seedFile, LOG_LEVEL: 'warn', HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (i > 300) throw new Error('the sandbox did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    networkConfig: (c) => ({ authUrl: url, audience: url, baseUrl: url, audiencePii: `${url}/pii`, baseUrlPii: `${url}/pii`, clientId: c.clientId, clientSecret: c.clientSecret }),
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(seedFile, { force: true });
    },
  };
}

const N = Number(process.env.BENCH_TRANSFERS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const FIELDS = process.env.BENCH_FIELDS ?? 'small';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

const log = (line: string) => process.stdout.write(`${line}\n`);

/** A typical transfer's personal data: names, an address line, a national id, account numbers (9 strings). */
const SMALL = {
  originator: {
    originatorPersons: [{
      naturalPerson: {
        name: [{ nameIdentifier: [{ primaryIdentifier: 'Baggins', secondaryIdentifier: 'Frodo', nameIdentifierType: 'LEGL' }] }],
        geographicAddress: [{ addressType: 'HOME', townName: 'Hobbiton', country: 'NZ' }],
      },
    }],
    accountNumber: ['0xa40dfee99e1c85dc97fdc594b16a460717838703'],
  },
  beneficiary: {
    beneficiaryPersons: [{ naturalPerson: { name: [{ nameIdentifier: [{ primaryIdentifier: 'Gamgee', secondaryIdentifier: 'Samwise', nameIdentifierType: 'LEGL' }] }] } }],
    accountNumber: ['0x1c70c03b0c6d0e1a04cd2ad09c7d1b5c8b0b7e11'],
  },
};

/** The internal API in this process and `npm run worker` as a child process on the same task queue and database. */
async function apiWithWorkerProcess(
  network: NetworkConfig,
  group: GroupConfig,
  agentKeys: string,
  settings: Partial<TransferConfig>,
): Promise<{ apiUrl: string; transfers: TransferContext; workerPid?: number; close(): Promise<void> }> {
  const env = testEnv();
  const taskQueue = `bench-${randomUUID()}`;
  const masterKey = randomBytes(32).toString('base64');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-transfers-'));
  // BENCH_WORKER_NODE_ARGS: extra node flags for the worker, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const worker = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(__dirname, '..', 'workers', 'main.ts')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, DATABASE_URL: env.databaseUrl,
      TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS, DATA_DIR: dataDir, LOG_LEVEL: 'warn',
      CLIENT_ID: network.clientId, CLIENT_SECRET: network.clientSecret, AUTH_URL: network.authUrl, BASE_URL: network.baseUrl,
      BASEURL_PII: network.baseUrlPii, KEYS: agentKeys, KEYSTORE_MASTER_KEY: masterKey,
      GATEWAY_VASP_DID: group.gatewayDid, SUBSIDIARY_VASP_DIDS: group.subsidiaryDids.join(','),
      TRANSFER_CALLBACK_URL: settings.callbackUrl, TRANSFER_POLL_INTERVAL: `${settings.pollIntervalMs}ms`,
      TRANSFER_ANSWER_DEADLINE: `${settings.answerDeadlineMs}ms`, KEY_ROTATION_PERIOD: 'off', ADDRESS_BOOK_CRON: 'off',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const pool = createPool(env.databaseUrl, 'orchestrator');
  const keystore = await openKeystore(pool, { masterKey, dataDir, agentKeys });
  const transfers = createTransferContext({
    pool, network: new NetworkClient(network), keystore, keyWrapper: new LocalKeyWrapper(Buffer.from(masterKey, 'base64')),
    config: { ...loadTransferConfig({}), ...settings }, group, logger: pino({ level: 'silent' }),
  });
  const connection = await Connection.connect({ address: env.temporalAddress });
  const client = new Client({ connection, dataConverter: createDataConverter(env.keyring) });
  const api = await buildApi({
    temporal: client, pool, codec: new EncryptionCodec(env.keyring), taskQueue, logger: pino({ level: 'silent' }), corsOrigins: [],
    keystore, group, transfers,
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  // The worker is ready once it has taken a first workflow task: run a connectivity check through it.
  await client.workflow.execute('connectivityCheck', { taskQueue, workflowId: `bench-ready-${randomUUID()}` });
  return {
    apiUrl: `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`,
    transfers,
    workerPid: worker.pid,
    close: async () => {
      await api.close();
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
      await connection.close();
      await pool.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** The Temporal dev server's pid, found by the port it listens on. */
function temporalPid(): number | undefined {
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

async function main() {
  const started = Date.now();
  await globalSetup();
  const pii = FIELDS === '40'
    ? (JSON.parse(readFileSync(`${__dirname}/../test/fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as typeof SMALL)
    : SMALL;

  const group = groupSeed();
  // The sandbox (the network) runs in its own process, as it does under `npm start`, so the orchestrator's figures are
  // not the network's CPU; BENCH_SANDBOX=inline keeps it in this process.
  const sandbox = process.env.BENCH_SANDBOX === 'inline' ? await startSandbox(group.seed) : await spawnSandbox(group.seed);
  const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
  await external.api.post('tf/vasps/update', {
    json: { did: group.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: createDidKeyRecord().did }] }] },
  }).json();

  // Completion signals: the orchestrator's callback (Temporal path) and the counterparty driver (direct path).
  const waiters = new Map<string, (at: number) => void>();
  const done = (id: string) => waiters.get(id)?.(performance.now());
  const callbacks = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.writeHead(204).end();
      const report = JSON.parse(body) as { id: string; status: string };
      if (report.status === 'ACCEPTED') done(report.id);
      else log(`unexpected final status ${report.status} for ${report.id}`);
    });
  });
  await new Promise<void>((r) => callbacks.listen(0, '127.0.0.1', r));

  const originatorKey = createDidKeyRecord();
  const group2 = { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] };
  const agentKeys = JSON.stringify([{ vaspDID: group.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]);
  const transferSettings = {
    callbackUrl: `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`,
    webhookSecrets: { [group.subA]: SECRET },
    pollIntervalMs: 10 * 60_000,
    answerDeadlineMs: 60 * 60_000,
  };
  // The worker runs in its own process (`npm run worker`), as deployed, unless BENCH_WORKER=inline.
  const orch = process.env.BENCH_WORKER === 'inline'
    ? await startOrchestrator(sandbox.networkConfig(group.gatewayUser), { group: group2, agentKeys, transfers: transferSettings })
    : await apiWithWorkerProcess(sandbox.networkConfig(group.gatewayUser), group2, agentKeys, transferSettings);

  // The counterparty: reads its inbox, confirms and accepts, and the network tells the originator by webhook.
  let driving = true;
  let directMode = false;
  const handled = new Set<string>();
  const answer = async (tx: NetworkTransaction) => {
    await external.api.post('tx/confirm', { searchParams: { id: tx.id } }).json();
    const accepted = await external.api.post('tx/accept', { searchParams: { id: tx.id } }).json<NetworkTransaction>();
    const raw = JSON.stringify({
      message: 'notification.transactionUpdated',
      payload: { transaction: { ...accepted, pii: undefined, ivms101: undefined } },
      version: '1',
    });
    const r = await fetch(`${orch.apiUrl}/webhooks/notification/${encodeURIComponent(group.subA)}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...webhookHeaders(SECRET, `msg_${randomUUID()}`, raw) }, body: raw,
    });
    if (r.status !== 200) throw new Error(`webhook answered ${r.status}`);
    if (directMode) done(accepted.transactionRef!);
  };
  const driver = (async () => {
    while (driving) {
      const { transactions } = await external.api
        .get('tx/list', { searchParams: { vaspDID: group.external, status: 'SENT', resultsPerPage: 100, sort: 'createdAt:ASC' } })
        .json<{ transactions: NetworkTransaction[] }>();
      const fresh = transactions.filter((t) => !handled.has(t.id));
      fresh.forEach((t) => handled.add(t.id));
      await Promise.all(fresh.map((t) => answer(t).catch((e: unknown) => log(`counterparty failed on ${t.id}: ${(e as Error).message}`))));
      if (fresh.length === 0) await new Promise((r) => setTimeout(r, 5));
    }
  })();

  const pids = { worker: (orch as { workerPid?: number }).workerPid, temporal: temporalPid(), sandbox: (sandbox as { pid?: number }).pid };
  const cpuNow = () => ({
    bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    worker: cpuSeconds(pids.worker),
    temporal: cpuSeconds(pids.temporal),
    sandbox: cpuSeconds(pids.sandbox),
  });

  const body = (): OutgoingTransferBody => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
    originator: pii.originator,
    beneficiary: pii.beneficiary,
  });

  async function run(label: string, count: number, one: (id: string) => Promise<void>) {
    const latencies: number[] = [];
    let next = 0;
    let failures = 0;
    const cpu0 = cpuNow();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
        while (next < count) {
          next++;
          const id = `bench-${randomUUID()}`;
          const finished = new Promise<number>((resolve) => waiters.set(id, resolve));
          const start = performance.now();
          try {
            await one(id);
            latencies.push((await finished) - start);
          } catch (e) {
            failures++;
            if (failures <= 3) log(`${label}: ${(e as Error).message}`);
          } finally {
            waiters.delete(id);
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu1 = cpuNow();
    const perTransfer = (k: keyof typeof cpu0) =>
      cpu0[k] === undefined || cpu1[k] === undefined ? undefined : ((cpu1[k]! - cpu0[k]!) * 1000) / Math.max(1, latencies.length);
    return {
      cpu: { bench: perTransfer('bench'), worker: perTransfer('worker'), temporal: perTransfer('temporal'), sandbox: perTransfer('sandbox') },
      label, count: latencies.length, failures, seconds,
      rate: latencies.length / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99),
    };
  }

  const viaApi = async (id: string) => {
    const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': id }, body: JSON.stringify(body()),
    });
    if (r.status !== 202) throw new Error(`POST /v1/transfers answered ${r.status}: ${await r.text()}`);
  };
  const direct = async (id: string) => {
    await runTransferDirect(orch.transfers, id, { body: { ...body(), transactionRef: id }, source: 'api', hybrid: false });
  };

  log(`bench:transfers — ${N} transfers per path, ${CONCURRENCY} in flight, ${FIELDS === '40' ? '40' : '9'}-field IVMS101, end-to-end mode`);
  // Warm-up: JIT, connection pools, directory cache, workflow bundle.
  await run('warm-up (temporal)', Math.min(100, N), viaApi);
  directMode = true;
  await run('warm-up (direct)', Math.min(100, N), direct);
  directMode = false;

  const results = [];
  const paths = (process.env.BENCH_PATHS ?? 'temporal,direct').split(',');
  if (paths.includes('temporal')) results.push(await run('through the API and Temporal', N, viaApi));
  directMode = true;
  if (paths.includes('direct')) results.push(await run('direct, without Temporal', N, direct));

  driving = false;
  await driver;
  log('');
  const ms = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(1));
  log('| path | transfers | failures | seconds | transfers/s | p50 ms | p99 ms | CPU ms/transfer: API+bench | worker | Temporal server | sandbox |');
  log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    log(
      `| ${r.label} | ${r.count} | ${r.failures} | ${r.seconds.toFixed(1)} | ${r.rate.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} ` +
        `| ${ms(r.cpu.bench)} | ${ms(r.cpu.worker)} | ${ms(r.cpu.temporal)} | ${ms(r.cpu.sandbox)} |`,
    );
  }
  log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  log(`\n(total run ${((Date.now() - started) / 1000).toFixed(0)} s)`);

  await orch.close();
  await sandbox.close();
  await new Promise((r) => callbacks.close(r));
  await globalTeardown();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:transfers failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
