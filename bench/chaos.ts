// Longer than 400 lines on purpose: one run's script read top to bottom (boot, work, faults, quiescence, checks,
// table); the processes and the secrets scan already live in bench/chaos/.
/**
 * `npm run chaos` (issue #12): what is lost or sent twice when the worker, the Temporal server, the API and the network
 * fail in the middle of real work. Not a timed test: a run takes minutes and prints one table.
 *
 * Boots the stack from scratch in its own data dir, database and ports (the Temporal dev server with its file
 * database, or with `--cluster` the Temporal server on PostgreSQL with databases of the run's own; the sandbox with
 * SANDBOX_FAULTS=1, the API and one worker; each its own process), then per round runs at once:
 * outgoing transfers (the simulated counterparty accepts, declines, answers late, or stays silent until the short
 * answer deadline), incoming transfers through the three routing paths (a share from a sanctioned name, held for
 * review and decided here), one subsidiary's address-book reconciliation, one key rotation and wallet ownership proofs
 * (bench/chaos/proofs.ts: signed, deposited, declared, or left to be rejected or to expire), and deposits reported by
 * the custody system, each twice (bench/chaos/deposits.ts: below the threshold, the transfer first, the originator's
 * data late, or never). Meanwhile, at seeded
 * random moments: the worker SIGKILLed 5 times (restarted at once or after a pause longer than the activity
 * timeouts), the Temporal server, the API and the sandbox SIGKILLed and restarted. Round 2 adds network
 * faults in the sandbox (sandbox/faults). Then it waits for quiescence and checks, from the sandbox's tables and the
 * orchestrator's: outcomes, 0 created twice at the network per transactionRef, 0 missing, every incoming decided
 * once, the network's address book equal to the registry, the rotation done with the old key still decrypting, every
 * outgoing transfer's personal data read by its counterparty, every wallet proof final as expected with one status
 * change and one workflow run, every deposit final as expected with one change to its final status, one workflow run
 * and one message at the network, every final transfer reported to TRANSFER_CALLBACK_URL with its final status
 * (bench/chaos/reports.ts). Last, the secrets scan (bench/chaos/secrets.ts).
 *
 * Options: `--seed=<n>` (printed; replays the fault schedule and the work mix), `--scale=<x>` (counts × x; 1 = 200
 * outgoing, 200 incoming, 100,000 addresses, 100 wallet proofs to verify and 5 each to reject and to expire, 100
 * deposits of which 10 are never answered),
 * `--rounds=1,2`, `--cluster` (the Temporal server on PostgreSQL, see bench/chaos/temporal.ts), `--keep` (keep the
 * data dir and the databases, the Temporal server's included).
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Pool } from 'pg';
import { createPool } from '../db/pool';
import { dropDatabase, ensureDatabase } from '../db/database-url';
import { migrate } from '../db/migrate';
import { resolveDatabaseServer } from '../db/server';
import { loadedLists } from '../screening/store';
import { loadSdnList } from '../screening/load-sdn';
import { createApiKey } from '../client/api/auth/api-keys';
import { ROLES, systemPrincipal, type Role } from '../lib/principal';
import { formatCodecKey } from '../lib/temporal/codec-keys';
import { simulateTransfer } from '../sandbox/nested-routing/simulate-client';
import { loadOrCreateDemoGroup, type DemoVasp } from '../scripts/demo-group';
import { demoKeys, prepareDemoNetwork } from '../scripts/demo-network';
import { freePort, httpOk, Proc, sleep, tsxArgs } from './chaos/processes';
import { checkProofs, driveProof, planProofs, walletKeyNeedles, type PlannedProof } from './chaos/proofs';
import { checkDeposits, depositNeedles, driveDeposit, planDeposits, prepareDeposits } from './chaos/deposits';
import { checkCustody, startCustodyReceiver, type CustodySubject } from './chaos/custody';
import { checkReports, startReportReceiver, type ReportSubject } from './chaos/reports';
import { generateWebhookSecret } from '../lib/webhook-signature';
import { secretsScan, type ScanResult } from './chaos/secrets';
import { chaosTemporal } from './chaos/temporal';
import { describeStuck } from './chaos/stuck';
import { workflowIds } from '../lib/temporal/workflow-ids';

const root = resolve(__dirname, '..');
const say = (line: string) => process.stdout.write(`${line}\n`);
const arg = (name: string) =>
  process.argv
    .slice(2)
    .find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
    ?.split('=')[1];

const SEED = Number(arg('seed') ?? Math.floor(Math.random() * 2 ** 31));
const SCALE = Number(arg('scale') ?? 1);
const ROUNDS = (arg('rounds') ?? '1,2').split(',').map(Number);
const KEEP = process.argv.includes('--keep');
const CLUSTER = process.argv.includes('--cluster');
if (!Number.isInteger(SEED) || !(SCALE > 0 && SCALE <= 1))
  throw new Error('--seed must be an integer, --scale a number in (0, 1]');
const N_OUT = Math.max(8, Math.round(200 * SCALE));
const N_IN = Math.max(9, Math.round(200 * SCALE));
const N_ADDR = Math.max(1000, Math.round(100_000 * SCALE));
/** Wallet proofs per round meant to be verified, and of each kind meant to end otherwise (REJECTED, EXPIRED). */
const N_PROOFS = Math.max(20, Math.round(100 * SCALE));
const N_ODD_PROOFS = Math.max(1, Math.round(5 * SCALE));
/**
 * The run's small-deposit deadline (WALLET_PROOF_DEPOSIT_DEADLINE, 48h by default): short, so a deposit never made
 * expires within the round, and longer than the longest wait for a worker to take a deposit reported in time: the
 * worker's outages (two 40 s pauses in a row and its restarts) and, at full scale, round 2's backlog of transfers
 * behind the lowered quota, which held the deposits' updates for minutes (at 180 s, 17 of 21 deposits reported in
 * time expired in the full run of seed 38390975 on eebc342).
 */
const DEPOSIT_DEADLINE_S = Math.max(180, Math.round(480 * SCALE));
/** Deposits reported per round (bench/chaos/deposits.ts), and of them whose originator never answers. */
const N_DEPOSITS = Math.max(12, Math.round(100 * SCALE));
const N_NEVER_DEPOSITS = Math.max(1, Math.round(10 * SCALE));
/**
 * The run's data deadline of deposits (DEPOSIT_DATA_DEADLINE, 72h by default): short, so a deposit whose originator
 * never answers is returned within the round, and well beyond its originator's late answer (up to 30 s after the
 * network's INCOMPLETE message, from which the deadline counts), which the sandbox's restart and the round's faults
 * can delay.
 */
const DEPOSIT_DATA_DEADLINE_S = Math.max(480, Math.round(900 * SCALE));
/** Answer deadline of outgoing transfers: the silent counterparty's transfers end EXPIRED after it. */
const DEADLINE_S = 90;
const LATE_S = 20;
/** Subsidiary B's broadcast rule's timeout: before the late answers, so both orders happen under the faults. */
const BROADCAST_TIMEOUT_S = 15;
/** A worker pause "longer than the activity timeouts" (the longest outgoing/incoming/rotation one is 30 s). */
const LONG_PAUSE_MS = 40_000;
const QUIESCENCE_TIMEOUT_MS = 25 * 60_000;
/** How long the watch loop retries one read: past the longest worker pause (the API's reads query the workflow). */
const WATCH_PATIENCE_MS = LONG_PAUSE_MS + 50_000;

/** mulberry32: a small seeded generator, so a seed replays the same schedule and mix. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
/** The wallet proofs' mix and moments come from a generator of their own: a seed's fault schedule stays as it was. */
const proofRandom = rng(SEED + 22);
/** The deposits' too (bench/chaos/deposits.ts). */
const depositRandom = rng(SEED + 23);

const NETWORK_FAULTS = {
  errors: { share: 0.2 },
  dropAfterCommit: { share: 0.05 },
  latency: { share: 0.1, ms: 2000 },
  webhooks: { duplicate: 1, reorder: 0.3 },
  keyRotation: { share: 0.05 },
};

/**
 * Round 2's quota at the network, below what the run's work needs (the orchestrator keeps its budget for the real
 * 6,000 per 300 s, so it learns of the lower quota only from the 429s): lockouts happen, and must cost nothing.
 */
const LOWERED_QUOTA = {
  limit: Math.max(30, Math.round(300 * SCALE)),
  windowSeconds: 30,
  lockoutSeconds: 10,
  reset: true,
};

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface FaultEvent {
  kind: 'worker' | 'temporal' | 'api' | 'sandbox';
  at: number;
  pauseMs: number;
  done?: number;
}

/**
 * Stops every process the run started and, without --keep, drops its databases and the Temporal server's storage: at
 * the end of a run, and when it fails half-way (a detached Temporal server and its databases would outlive it).
 */
let cleanUp: (() => Promise<void>) | undefined;

interface WorkResult {
  work: string;
  total: number;
  completed: number;
  lost: number;
  duplicated: number;
  wrong: number;
  recoverMs?: number;
  notes: string[];
}

async function main() {
  const tag = `${Date.now()}_${process.pid}`;
  const dataDir = resolve(root, '.data', `chaos-${tag}`);
  const logDir = resolve(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const started = Date.now();
  say(
    `npm run chaos — seed ${SEED} (replay: npm run chaos -- --seed=${SEED}${SCALE !== 1 ? ` --scale=${SCALE}` : ''}${CLUSTER ? ' --cluster' : ''}), scale ${SCALE}: ` +
      `${N_OUT} outgoing, ${N_IN} incoming, ${N_ADDR.toLocaleString('en')} addresses, ${N_PROOFS + 2 * N_ODD_PROOFS} wallet proofs, ${N_DEPOSITS} deposits per round; data in ${dataDir}`,
  );

  // PostgreSQL: the run's own database (both schemas).
  const server = await resolveDatabaseServer({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: resolve(root, '.data'),
    log: say,
  });
  const dbName = `tro_chaos_${tag}`;
  const databaseUrl = `${server.serverUrl}/${dbName}`;
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, 'orchestrator');
  await migrate(databaseUrl, 'sandbox');
  const orch = createPool(databaseUrl, 'orchestrator');
  const net = createPool(databaseUrl, 'sandbox');

  const [sandboxPort, apiPort] = [await freePort(), await freePort()];
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  // The sandbox's /sandbox/* test routes (faults, the simulated counterparty) answer only to this token.
  const testRoutes = { url: sandboxUrl, testToken: randomBytes(32).toString('base64url') };
  const testAuth = { authorization: `Bearer ${testRoutes.testToken}` };
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const codecKeys = formatCodecKey(`chaos-${tag}`, randomBytes(32));
  const masterKey = randomBytes(32).toString('base64');

  const temporalServer = await chaosTemporal({
    cluster: CLUSTER,
    tag,
    dataDir,
    logDir,
    serverUrl: server.serverUrl,
    log: say,
  });
  const { proc: temporal, address: temporalAddress } = temporalServer;
  const running: Proc[] = [temporal];
  cleanUp = async () => {
    for (const p of [...running].reverse()) await p.stop();
    if (!KEEP) {
      await dropDatabase(server.serverUrl, dbName);
      await temporalServer.remove();
      rmSync(resolve(dataDir, 'scan'), { recursive: true, force: true });
    }
    await server.stop();
  };

  // The demo group plus a third subsidiary whose address book is reconciled (the other two hold the routing paths'
  // addresses, which must stay out of the network's book).
  const { group } = loadOrCreateDemoGroup(resolve(dataDir, 'demo.json'));
  const subC: DemoVasp = {
    name: 'Chaos Subsidiary C',
    did: `did:ethr:0x${randomBytes(20).toString('hex')}`,
    credentials: { clientId: 'unused', clientSecret: 'unused', userDid: 'unused' },
  };
  group.subsidiaries.push(subC);
  group.seed.vasps.push({ did: subC.did, name: subC.name, parentDid: group.gateway.did });
  group.seed.vasps = group.seed.vasps.map((v) => (v.did === group.external.did ? { ...v, simulated: true } : v));
  const [subA, subB] = group.subsidiaries as [DemoVasp, DemoVasp, DemoVasp];
  // The custody system, in this process: takes the deposits' and the outgoing transfers' callbacks.
  const custodySecret = generateWebhookSecret();
  const custodyReceiver = await startCustodyReceiver(custodySecret, SEED);
  // The internal systems, in this process too: take every transfer's report (TRANSFER_CALLBACK_URL).
  const reportReceiver = await startReportReceiver(SEED);
  const stopCleanUp = cleanUp;
  cleanUp = async () => {
    await custodyReceiver.close();
    await reportReceiver.close();
    await stopCleanUp?.();
  };
  const seedFile = resolve(dataDir, 'sandbox-seed.json');
  writeFileSync(seedFile, JSON.stringify(group.seed), { mode: 0o600 });

  let networkFaultsOn = false;
  const injectedNetwork: Record<string, number> = {};
  const readNetworkFaults = async () => {
    const r = await fetch(`${sandboxUrl}/sandbox/faults`, { headers: testAuth }).then(
      (x) => x.json() as Promise<Json>,
      () => undefined,
    );
    for (const [k, v] of Object.entries((r?.injected ?? {}) as Record<string, number>))
      injectedNetwork[k] = (injectedNetwork[k] ?? 0) + v;
  };
  const putNetworkFaults = async (config: unknown) => {
    const r = await fetch(`${sandboxUrl}/sandbox/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...testAuth },
      body: JSON.stringify(config),
    });
    if (!r.ok) throw new Error(`PUT /sandbox/faults answered ${r.status}`);
  };
  // The network's quota (the sandbox enforces 6,000 calls per 300 s per credential by default, as the network does):
  // round 1 must never reach it; round 2 lowers it below what the run needs, so lockouts happen and must cost nothing.
  // A restarted sandbox starts from its defaults, so the lowered quota is set again after each restart.
  const quotaTotals = { rejected: 0, lockouts: 0 };
  const readQuota = async () => {
    const r = await fetch(`${sandboxUrl}/sandbox/rate-limit`, { headers: testAuth }).then(
      (x) => x.json() as Promise<Json>,
      () => undefined,
    );
    for (const c of (r?.credentials ?? []) as { rejected?: number; lockouts?: number }[]) {
      quotaTotals.rejected += c.rejected ?? 0;
      quotaTotals.lockouts += c.lockouts ?? 0;
    }
  };
  const putQuota = async (config: unknown) => {
    const r = await fetch(`${sandboxUrl}/sandbox/rate-limit`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...testAuth },
      body: JSON.stringify(config),
    });
    if (!r.ok) throw new Error(`PUT /sandbox/rate-limit answered ${r.status}`);
  };
  const sandbox = new Proc(
    'sandbox',
    tsxArgs('sandbox/main.ts'),
    {
      DATABASE_URL: databaseUrl,
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_SEED: seedFile,
      SANDBOX_PUBLIC_URL: sandboxUrl,
      SANDBOX_FAULTS: '1',
      SANDBOX_TEST_ROUTES: '1',
      SANDBOX_OPERATOR_TOKEN: testRoutes.testToken,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
    },
    logDir,
    httpOk(`${sandboxUrl}/healthz`),
  );
  running.push(sandbox);

  await Promise.all([temporalServer.start(), sandbox.start()]);
  const keys = demoKeys(group);
  const networkEnv = await prepareDemoNetwork(testRoutes, apiUrl, group, keys);
  const common: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    GATEWAY_VASP_DID: group.gateway.did,
    SUBSIDIARY_VASP_DIDS: group.subsidiaries.map((s) => s.did).join(','),
    TEMPORAL_CODEC_KEYS: codecKeys,
    KEYSTORE_MASTER_KEY: masterKey,
    AUTH_URL: sandboxUrl,
    BASE_URL: sandboxUrl,
    AUDIENCE: sandboxUrl,
    BASEURL_PII: `${sandboxUrl}/pii`,
    AUDIENCE_PII: `${sandboxUrl}/pii`,
    CLIENT_ID: group.gateway.credentials.clientId,
    CLIENT_SECRET: group.gateway.credentials.clientSecret,
    TRANSFER_ANSWER_DEADLINE: `${DEADLINE_S}s`,
    TRANSFER_POLL_INTERVAL: '20s',
    INCOMING_POLL_INTERVAL: '20s',
    INCOMING_SWEEP_INTERVAL: '1m',
    INCOMING_SWEEP_MIN_AGE: '30s',
    KEY_ROTATION_PERIOD: 'off',
    ADDRESS_BOOK_CRON: 'off',
    RETENTION_CRON: 'off',
    WALLET_PROOF_DEPOSIT_ADDRESSES: JSON.stringify({ ethereum: `0x${randomBytes(20).toString('hex')}` }),
    WALLET_PROOF_DEPOSIT_DEADLINE: `${DEPOSIT_DEADLINE_S}s`,
    DEPOSIT_DATA_DEADLINE: `${DEPOSIT_DATA_DEADLINE_S}s`,
    // A deposit whose transfer was accepted is released at its next check: at most 30 s later, not the default 5 min.
    DEPOSIT_RECHECK_MAX: '30s',
    CUSTODY_CALLBACK_URL: custodyReceiver.custody.url,
    CUSTODY_CALLBACK_SECRET: custodySecret,
    TRANSFER_CALLBACK_URL: reportReceiver.url,
    // Subsidiary A broadcasts once the beneficiary accepted (the default); B also when no answer came within the
    // timeout, which races the late answers and the silent ones' deadline.
    TRANSFER_BROADCAST_BY_SUBSIDIARY: JSON.stringify({ [subB.did]: `after-timeout:${BROADCAST_TIMEOUT_S}s` }),
    ...networkEnv,
  };
  const worker = new Proc('worker', tsxArgs('workers/main.ts'), common, logDir, async () => true);
  const api = new Proc('api', tsxArgs('client/main.ts'), common, logDir, httpOk(`${apiUrl}/healthz`));
  running.push(worker, api);
  await worker.start();
  await api.start();
  const procs = { temporal, sandbox, api, worker };

  const credentials = {} as Record<Role, string>;
  for (const role of ROLES)
    credentials[role] = (await createApiKey(orch, { name: `chaos-${role}`, role }, systemPrincipal('chaos'))).key;
  if ((await loadedLists(orch)).length === 0) {
    const dir = resolve(root, 'data/sanctions');
    await loadSdnList(orch, { list: 'sample-sdn', sdnPath: `${dir}/sdn-sample.csv`, altPath: `${dir}/alt-sample.csv` });
  }
  say(
    `stack up in ${((Date.now() - started) / 1000).toFixed(0)} s: ${temporalServer.label} ${temporalAddress}, sandbox ${sandboxUrl}, API ${apiUrl}`,
  );

  /**
   * A call to the internal API that outlasts its restarts: connection errors, 5xx and 429 are tried again for up to
   * `patienceMs` (the watch loop's reads give up sooner and look again in its next round, so one answer that stays a
   * 5xx, or a read that times out against an API still restarting on a loaded machine, cannot hold up or end the run).
   */
  async function call(
    method: string,
    path: string,
    role: Role,
    body?: unknown,
    headers: Record<string, string> = {},
    patienceMs = 10 * 60_000,
  ): Promise<{ status: number; body: Json }> {
    const deadline = Date.now() + patienceMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await fetch(`${apiUrl}${path}`, {
          method,
          signal: AbortSignal.timeout(60_000),
          headers: {
            authorization: `Bearer ${credentials[role]}`,
            ...(body !== undefined && { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await r.text();
        if (r.status < 500 && r.status !== 429) return { status: r.status, body: text ? JSON.parse(text) : undefined };
        if (Date.now() > deadline) return { status: r.status, body: text };
      } catch (e) {
        // A read that finds no answer in its patience is "not yet" (status 0): its caller looks again in its next
        // round. A write that finds none is the run's failure.
        if (Date.now() > deadline) {
          if (method === 'GET') return { status: 0, body: { error: (e as Error).message } };
          throw e;
        }
      }
      await sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)));
    }
  }

  /** Runs `fn` over items with at most `n` in flight. */
  async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(n, items.length) }, async () => {
        while (next < items.length) {
          const i = next++;
          await fn(items[i]!, i);
        }
      }),
    );
  }

  const needles = { outgoingPii: [] as string[], incomingPii: [] as string[] };
  const walletKeys: string[] = [];
  const results: {
    round: number;
    faults: string;
    rows: WorkResult[];
    proofSummary: string;
    depositSummary: string;
    custodySummary: string;
    seconds: number;
    quota: { rejected: number; lockouts: number };
  }[] = [];
  const hex = (label: string, n = 8) =>
    createHash('sha256').update(`${SEED}/${tag}/${label}`).digest('hex').slice(0, n);

  for (const round of ROUNDS) {
    const roundStart = Date.now();
    networkFaultsOn = round === 2;
    quotaTotals.rejected = 0;
    quotaTotals.lockouts = 0;
    await putQuota(
      networkFaultsOn ? LOWERED_QUOTA : { limit: 6000, windowSeconds: 300, lockoutSeconds: 10, reset: true },
    );
    say(
      `\n— round ${round}: ${networkFaultsOn ? `network faults on (${JSON.stringify(NETWORK_FAULTS)})` : 'no network faults'} —`,
    );

    // The work of the round.
    const kinds = [
      'accept',
      'accept',
      'accept',
      'accept',
      'decline',
      'decline',
      'late',
      'late',
      'silent',
      'silent',
    ] as const;
    const expectedOut = { accept: 'ACCEPTED', decline: 'DECLINED', late: 'ACCEPTED', silent: 'EXPIRED' } as const;
    const outgoing = Array.from({ length: N_OUT }, (_, i) => {
      const kind = kinds[Math.floor(random() * kinds.length)]!;
      const person = {
        family: `Orig${hex(`r${round}o${i}f`)}`,
        given: `Chaos${hex(`r${round}o${i}g`)}`,
        town: `Town${hex(`r${round}o${i}t`)}`,
        bene: `Bene${hex(`r${round}o${i}b`)}`,
      };
      needles.outgoingPii.push(person.family, person.given, person.town, person.bene);
      return {
        id: `chaos-${tag}-r${round}-o${i}`,
        kind,
        expected: expectedOut[kind],
        originator: i % 2 === 0 ? subA : subB,
        destination: `0x${hex(`r${round}o${i}d`, 40)}`,
        person,
        status: undefined as string | undefined,
        finalAt: undefined as number | undefined,
        transactionId: undefined as string | undefined,
      };
    });
    const behaviours = Object.fromEntries(
      outgoing.map((o) => [o.destination, o.kind === 'late' ? `late:${LATE_S}` : o.kind]),
    );
    const sim = await fetch(`${sandboxUrl}/sandbox/counterparties/${group.external.did}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...testAuth },
      body: JSON.stringify({ default: 'accept', behaviours }),
    });
    if (!sim.ok) throw new Error(`configuring the counterparty answered ${sim.status}`);

    const paths = ['address-book', 'address-webhook', 'notification'] as const;
    const incoming = Array.from({ length: N_IN }, (_, j) => {
      const path = paths[j % 3]!;
      const sanctioned = random() < 0.15;
      const decision = sanctioned ? (random() < 0.5 ? 'approve' : 'decline') : undefined;
      const name: [string, string] = sanctioned
        ? ['Ivan', 'Petrov']
        : [`In${hex(`r${round}i${j}g`)}`, `Chaos${hex(`r${round}i${j}f`)}`];
      if (!sanctioned) needles.incomingPii.push(...name);
      return {
        j,
        path,
        sanctioned,
        decision,
        name,
        amount: String(1_000_000 + round * 100_000 + j),
        destination: `0x${hex(`r${round}i${j}d`, 40)}`,
        owner: path === 'address-webhook' ? subB : subA,
        expected: decision === 'decline' ? 'DECLINED' : 'ACCEPTED',
        ids: [] as string[],
        decided: false,
      };
    });
    // The registry holds every incoming address; the network's book only the first path's.
    const entries = incoming.map((t) => ({
      vaspDID: t.owner.did,
      asset: 'ETH',
      address: t.destination,
      customerRef: `chaos-in-${round}-${t.j}`,
    }));
    const put = await call('PUT', '/v1/addresses', 'operator', { addresses: entries });
    if (put.status !== 200)
      throw new Error(`PUT /v1/addresses answered ${put.status}: ${JSON.stringify(put.body).slice(0, 300)}`);
    const gwToken = await networkToken(sandboxUrl, group.gateway.credentials);
    for (const t of incoming.filter((x) => x.path === 'address-book')) {
      await retry(() =>
        networkCall(sandboxUrl, gwToken, 'POST', '/address/registerCustomer', {
          vaspDID: t.owner.did,
          asset: 'ETH',
          address: t.destination,
          customerRef: `chaos-in-${round}-${t.j}`,
        }),
      );
    }
    // The reconciled subsidiary's registry: N_ADDR addresses (round 2: 5 % removed and as many added).
    if (round === ROUNDS[0]) {
      await orch.query(
        `insert into address_registry (asset, address, tag, vasp_did, customer_ref)
         select 'ETH', '0xc' || lpad(to_hex(i), 39, '0'), '', $1, 'chaos-' || i from generate_series(1, $2::int) i`,
        [subC.did, N_ADDR],
      );
    } else {
      const changes = Math.round(N_ADDR * 0.05);
      await orch.query(
        `delete from address_registry where vasp_did = $1 and customer_ref in (select 'chaos-' || i from generate_series(1, $2::int, 20) i)`,
        [subC.did, N_ADDR],
      );
      await orch.query(
        `insert into address_registry (asset, address, tag, vasp_did, customer_ref)
         select 'ETH', '0xc' || lpad(to_hex(i), 39, '0'), '', $1, 'chaos-' || i from generate_series($2::int + 1, $2::int + $3::int) i
         on conflict do nothing`,
        [subC.did, N_ADDR * round, changes],
      );
    }
    await orch.query('analyze address_registry');
    const rotated = round === 1 ? subA : subB;
    // The faults of the round, at seeded moments within its first minutes.
    const windowMs = Math.round((30 + 90 * SCALE) * 1000);
    // Deposits: their addresses registered and their originators' answers set before the faults.
    const deposits = planDeposits({
      prefix: `chaos-${tag}-r${round}`,
      n: N_DEPOSITS,
      never: N_NEVER_DEPOSITS,
      windowMs,
      vaspDids: [subA.did, subB.did],
      random: depositRandom,
    });
    needles.incomingPii.push(...depositNeedles(deposits));
    await prepareDeposits(deposits, { call, sandbox: testRoutes, originatorDid: group.external.did });
    if (networkFaultsOn) await putNetworkFaults(NETWORK_FAULTS);

    const events: FaultEvent[] = [
      ...Array.from({ length: 5 }, (_, k): FaultEvent => ({
        kind: 'worker',
        at: 3000 + random() * windowMs,
        pauseMs: k < 2 ? LONG_PAUSE_MS : Math.round(random() * 3000),
      })),
      { kind: 'temporal' as const, at: 3000 + random() * windowMs, pauseMs: 0 },
      { kind: 'api' as const, at: 3000 + random() * windowMs, pauseMs: 0 },
      { kind: 'sandbox' as const, at: 3000 + random() * windowMs, pauseMs: 0 },
    ].sort((a, b) => a.at - b.at);
    const proofs: PlannedProof[] = planProofs({
      prefix: `chaos-${tag}-r${round}`,
      n: N_PROOFS,
      odd: N_ODD_PROOFS,
      windowMs,
      random: proofRandom,
    });
    walletKeys.push(...walletKeyNeedles(proofs));
    say(
      `faults: ${events.map((e) => `${e.kind}@${(e.at / 1000).toFixed(0)}s${e.pauseMs > 5000 ? `(pause ${e.pauseMs / 1000}s)` : ''}`).join(', ')}`,
    );

    const t0 = Date.now();
    // One lane per process: a worker's pause delays its next kill, not the other processes' faults.
    const lanes = (['worker', 'temporal', 'api', 'sandbox'] as const).map((kind) =>
      events.filter((e) => e.kind === kind),
    );
    const injector = Promise.all(
      lanes.map(async (lane) => {
        for (const e of lane) {
          const wait = t0 + e.at - Date.now();
          if (wait > 0) await sleep(wait);
          e.at = Date.now() - t0;
          const signal = e.kind === 'temporal' ? temporalServer.killSignal : 'SIGKILL';
          say(
            `  ${(e.at / 1000).toFixed(1)}s: ${e.kind} ${signal === 'SIGKILL' ? 'SIGKILLed' : `stopped (${signal})`}${e.pauseMs ? `, back in ${(e.pauseMs / 1000).toFixed(1)} s` : ''}`,
          );
          if (e.kind === 'sandbox' && networkFaultsOn) await readNetworkFaults();
          if (e.kind === 'sandbox') await readQuota();
          await procs[e.kind].restart(e.pauseMs, signal);
          if (e.kind === 'sandbox' && networkFaultsOn) await putNetworkFaults(NETWORK_FAULTS);
          if (e.kind === 'sandbox' && networkFaultsOn) await putQuota(LOWERED_QUOTA);
          e.done = Date.now() - t0;
          say(`  ${(e.done / 1000).toFixed(1)}s: ${e.kind} back (down ${((e.done - e.at) / 1000).toFixed(1)} s)`);
        }
      }),
    );

    // Wallet proofs: started before and during the faults and completed through them (bench/chaos/proofs.ts).
    const proofWork = Promise.all(
      proofs.map((p) =>
        driveProof(p, {
          call,
          t0,
          deadline: t0 + QUIESCENCE_TIMEOUT_MS,
          vaspDid: subA.did,
          patienceMs: WATCH_PATIENCE_MS,
        }),
      ),
    );

    // Deposits: reported twice each during the faults and read until final (bench/chaos/deposits.ts).
    const depositWork = Promise.all(
      deposits.map((d) =>
        driveDeposit(d, {
          call,
          t0,
          deadline: t0 + QUIESCENCE_TIMEOUT_MS,
          patienceMs: WATCH_PATIENCE_MS,
          sandbox: testRoutes,
          originatorDid: group.external.did,
          gatewayDid: group.gateway.did,
        }),
      ),
    );

    // Outgoing: POSTed (the Idempotency-Key makes a repeat after a lost answer the same transfer).
    const sendOutgoing = pool(outgoing, 16, async (o) => {
      const r = await call(
        'POST',
        '/v1/transfers',
        'operator',
        {
          transactionAsset: 'ETH',
          transactionAmount: '1000000000000000',
          originatorVASPdid: o.originator.did,
          beneficiaryVASPdid: group.external.did,
          transactionBlockchainInfo: { destination: o.destination },
          originator: {
            originatorPersons: [
              {
                naturalPerson: {
                  name: [
                    {
                      nameIdentifier: [
                        {
                          primaryIdentifier: o.person.family,
                          secondaryIdentifier: o.person.given,
                          nameIdentifierType: 'LEGL',
                        },
                      ],
                    },
                  ],
                  geographicAddress: [{ addressType: 'HOME', townName: o.person.town, country: 'NZ' }],
                },
              },
            ],
            accountNumber: ['0xa40dfee99e1c85dc97fdc594b16a460717838703'],
          },
          beneficiary: {
            beneficiaryPersons: [
              {
                naturalPerson: {
                  name: [
                    {
                      nameIdentifier: [
                        { primaryIdentifier: o.person.bene, secondaryIdentifier: 'Sam', nameIdentifierType: 'LEGL' },
                      ],
                    },
                  ],
                },
              },
            ],
            accountNumber: [o.destination],
          },
        },
        { 'idempotency-key': o.id },
      );
      if (r.status !== 200 && r.status !== 202)
        throw new Error(`POST /v1/transfers answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    });
    // Incoming: the counterparty sends (sandbox-only route; a sandbox restart mid-request is retried, which may make
    // a second network transaction: both are then counted below, as the network knows them).
    const sendIncoming = pool(incoming, 6, async (t) => {
      const tx = await retry(() =>
        simulateTransfer(testRoutes, {
          from: group.external.did,
          to: group.gateway.did,
          destination: t.destination,
          originatorName: t.name,
          amount: t.amount,
        }),
      );
      t.ids.push(tx.id);
    });
    const reconcile = (async () => {
      const r = await call('POST', `/v1/address-book/${encodeURIComponent(subC.did)}/reconcile`, 'operator', {
        mode: 'auto',
      });
      if (r.status !== 202) throw new Error(`reconcile answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body.workflowId as string;
    })();
    const rotation = (async () => {
      await sleep(5000 + random() * 10_000);
      const r = await call('POST', `/v1/vasps/${encodeURIComponent(rotated.did)}/keys/rotate`, 'operator', {
        reason: `chaos round ${round}`,
      });
      if (r.status !== 202 && r.status !== 409)
        throw new Error(`rotate answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      return Date.now();
    })();
    await Promise.all([sendOutgoing, sendIncoming]);
    const reconcileId = await reconcile;
    const rotationAt = await rotation;
    say(`  ${((Date.now() - t0) / 1000).toFixed(1)}s: all work submitted`);

    // Watch until every piece of work is final (incoming reviews decided here).
    const FINAL_OUT = new Set(['ACCEPTED', 'DECLINED', 'REJECTED', 'EXPIRED', 'FAILED', 'NOT_READY', 'CANCELLED']);
    const completions: Record<string, number[]> = {
      outgoing: [],
      incoming: [],
      reconciliation: [],
      'key rotation': [],
      'wallet proofs': [],
      deposits: [],
      custody: [],
      reports: [],
    };
    const incomingState = new Map<
      string,
      { phase: string; networkStatus: string; finalAt?: number; decisions: number; screening?: Json }
    >();
    let reconcileState: { status: string; report?: Json; error?: string; finalAt?: number } = { status: 'RUNNING' };
    let rotationState: { workflowStatus?: string; finalAt?: number; body?: Json } = {};
    // The reconciliation and the rotation: their end as the orchestrator recorded it, not when this loop looked.
    const endedAt = async (sql: string, args: unknown[]) =>
      ((await orch.query<{ at: Date | null }>(sql, args)).rows[0]?.at?.getTime() ?? Date.now()) - t0;
    const checkSingletons = async () => {
      if (!reconcileState.finalAt) {
        const r = await call(
          'GET',
          `/v1/address-book/${encodeURIComponent(subC.did)}/reconcile/${reconcileId}`,
          'viewer',
        );
        if (r.status === 200 && r.body.status !== 'RUNNING') {
          reconcileState = { ...r.body, finalAt: Date.now() };
          completions.reconciliation!.push(
            await endedAt('select max(finished_at) as at from address_book_runs where vasp_did = $1', [subC.did]),
          );
        }
      }
      if (!rotationState.finalAt) {
        const r = await call('GET', `/v1/vasps/${encodeURIComponent(rotated.did)}/keys/rotation`, 'viewer');
        if (r.status === 200 && r.body.workflowStatus && r.body.workflowStatus !== 'RUNNING') {
          rotationState = { workflowStatus: r.body.workflowStatus, finalAt: Date.now(), body: r.body };
          completions['key rotation']!.push(
            await endedAt('select max(finished_at) as at from key_rotations where vasp_did = $1', [rotated.did]),
          );
        }
      }
    };
    const deadline = Date.now() + QUIESCENCE_TIMEOUT_MS;
    let injectorDone = false;
    void injector.then(() => (injectorDone = true));
    for (;;) {
      await checkSingletons();
      await pool(
        outgoing.filter((o) => !o.finalAt),
        8,
        async (o) => {
          const r = await call('GET', `/v1/transfers/${o.id}`, 'viewer', undefined, {}, WATCH_PATIENCE_MS);
          if (r.status !== 200) return;
          o.transactionId = r.body.transactionId;
          if (FINAL_OUT.has(r.body.status)) {
            o.status = r.body.status;
            o.finalAt = Date.now();
            completions.outgoing!.push(finishedAt(r.body.history) - t0);
          }
        },
      );
      await pool(
        incoming.flatMap((t) => t.ids.map((id) => ({ t, id }))).filter(({ id }) => !incomingState.get(id)?.finalAt),
        8,
        async ({ t, id }) => {
          const r = await call('GET', `/v1/incoming-transfers/${id}`, 'viewer', undefined, {}, WATCH_PATIENCE_MS);
          if (r.status !== 200) return;
          const s = incomingState.get(id) ?? { phase: '', networkStatus: '', decisions: 0 };
          Object.assign(s, { phase: r.body.phase, networkStatus: r.body.networkStatus, screening: r.body.screening });
          incomingState.set(id, s);
          if (r.body.phase === 'awaiting-review' && !t.decided) {
            const d = await call('POST', `/v1/transfers/${id}/decision`, 'compliance', {
              decision: t.decision ?? 'approve',
              reason: `chaos round ${round}`,
            });
            if (d.status === 200 || d.status === 409) {
              t.decided = true;
              s.decisions++;
            }
          }
          if (r.body.phase === 'completed' || r.body.phase === 'rejected') {
            s.finalAt = Date.now();
            completions.incoming!.push(finishedAt(r.body.history) - t0);
          }
        },
      );
      await checkSingletons();
      const pending = {
        outgoing: outgoing.filter((o) => !o.finalAt).length,
        incoming: incoming.filter((t) => t.ids.length === 0 || t.ids.some((id) => !incomingState.get(id)?.finalAt))
          .length,
        reconciliation: reconcileState.finalAt ? 0 : 1,
        rotation: rotationState.finalAt ? 0 : 1,
        proofs: proofs.filter((p) => p.finalAt === undefined && !p.error).length,
        deposits: deposits.filter((d) => d.finalAt === undefined && !d.error).length,
      };
      const left = Object.values(pending).reduce((a, b) => a + b, 0);
      if (left === 0 && injectorDone) break;
      if (Date.now() > deadline) {
        say(`  quiescence not reached within ${QUIESCENCE_TIMEOUT_MS / 60_000} min: ${JSON.stringify(pending)}`);
        const stuck = [
          ...(reconcileState.finalAt ? [] : [reconcileId]),
          ...(rotationState.finalAt ? [] : [workflowIds.keyRotation(rotated.did)]),
          ...outgoing
            .filter((o) => !o.finalAt)
            .slice(0, 3)
            .map((o) => workflowIds.outgoingTransfer(o.id)),
          ...deposits
            .filter((d) => d.id && d.finalAt === undefined)
            .slice(0, 3)
            .map((d) => workflowIds.deposit(d.id!)),
        ];
        for (const line of await describeStuck(temporalAddress, codecKeys, stuck)) say(line);
        break;
      }
      say(
        `  ${((Date.now() - t0) / 1000).toFixed(0)}s: pending ${JSON.stringify(pending)}${injectorDone ? '' : ' (faults still to come)'}`,
      );
      await sleep(5000);
    }
    await injector;
    await proofWork;
    await depositWork;
    await readQuota();
    await putQuota({ limit: 6000, windowSeconds: 300, lockoutSeconds: 10, reset: true });
    if (networkFaultsOn) {
      await readNetworkFaults();
      await putNetworkFaults({});
    }
    // Incoming transactions the network has that no send here returned (a retried send after a lost answer).
    const known = new Set(incoming.flatMap((t) => t.ids));
    const { rows: netIncoming } = await net.query<{ id: string; amount: string; status: string; decisions: number }>(
      `select id, transaction_amount::text as amount, status,
              (select count(*)::int from jsonb_array_elements(coalesce(body->'actions', '[]')) a where a->>'action' in ('accept', 'decline', 'reject')) as decisions
         from transactions where originator_vasp_did = $1 and created_at >= $2`,
      [group.external.did, new Date(roundStart)],
    );
    const extraIncoming = netIncoming.filter((t) => !known.has(t.id) && incoming.some((i) => i.amount === t.amount));
    // The watch loop knows only the ids its sends returned: a transfer the counterparty sent again is read here, and
    // waited for (like the others, up to the quiescence deadline) before it is checked.
    for (const extra of extraIncoming) {
      while (!incomingState.get(extra.id)?.finalAt && Date.now() < deadline) {
        const r = await call('GET', `/v1/incoming-transfers/${extra.id}`, 'viewer', undefined, {}, WATCH_PATIENCE_MS);
        if (r.status === 200) {
          // Held for review like the transfer it repeats: decided as the script decides that one.
          const repeated = incoming.find((i) => i.amount === extra.amount);
          if (r.body.phase === 'awaiting-review') {
            await call('POST', `/v1/transfers/${extra.id}/decision`, 'compliance', {
              decision: repeated?.decision ?? 'approve',
              reason: `chaos round ${round}`,
            });
          }
          const final = r.body.phase === 'completed' || r.body.phase === 'rejected';
          incomingState.set(extra.id, {
            phase: r.body.phase,
            networkStatus: r.body.networkStatus,
            screening: r.body.screening,
            decisions: 0,
            ...(final && { finalAt: Date.now() }),
          });
          if (final) break;
        }
        await sleep(5000);
      }
    }

    // Checks, from the network's tables and the orchestrator's.
    const ids = outgoing.map((o) => o.id);
    const { rows: refs } = await net.query<{ ref: string; n: number; ids: string[] }>(
      'select transaction_ref as ref, count(*)::int as n, array_agg(id::text) as ids from transactions where transaction_ref = any($1) group by 1',
      [ids],
    );
    const byRef = new Map(refs.map((r) => [r.ref, r]));
    const netIds = refs.flatMap((r) => r.ids);
    const { rows: recv } = await net.query<{ transaction_id: string; decrypted: boolean; mode: string }>(
      'select transaction_id::text, decrypted, mode from sim_counterparty_received where vasp_did = $1 and transaction_id = any($2::uuid[])',
      [group.external.did, netIds],
    );
    const readable = new Set(recv.filter((r) => r.decrypted).map((r) => r.transaction_id));
    const outRow: WorkResult = {
      work: 'outgoing transfers',
      total: N_OUT,
      completed: 0,
      lost: 0,
      duplicated: 0,
      wrong: 0,
      notes: [],
    };
    const wrongOut = new Map<string, number>();
    let unreadable = 0;
    for (const o of outgoing) {
      const at = byRef.get(o.id);
      if (!at) outRow.lost++;
      else if (at.n > 1) outRow.duplicated += at.n - 1;
      if (o.status === o.expected) outRow.completed++;
      else if (o.status) {
        outRow.wrong++;
        wrongOut.set(`${o.kind}→${o.status}`, (wrongOut.get(`${o.kind}→${o.status}`) ?? 0) + 1);
      } else if (at) outRow.lost++; // created at the network but never final here
      if (at && !at.ids.every((id) => readable.has(id))) unreadable++;
    }
    if (wrongOut.size)
      outRow.notes.push(`unexpected outcomes: ${[...wrongOut].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    if (unreadable) outRow.notes.push(`${unreadable} not decrypted by the counterparty`);
    outRow.wrong += unreadable;

    const inRow: WorkResult = {
      work: 'incoming transfers',
      total: N_IN,
      completed: 0,
      lost: 0,
      duplicated: 0,
      wrong: 0,
      notes: [],
    };
    const netById = new Map(netIncoming.map((t) => [t.id, t]));
    const wrongIn = new Map<string, number>();
    for (const t of incoming) {
      if (t.ids.length === 0) {
        inRow.lost++;
        continue;
      }
      const all = [...t.ids, ...extraIncoming.filter((x) => x.amount === t.amount).map((x) => x.id)];
      for (const id of all) {
        const n = netById.get(id);
        const s = incomingState.get(id);
        if (!n || !s?.finalAt) {
          inRow.lost++;
          continue;
        }
        if (n.decisions > 1) inRow.duplicated += n.decisions - 1;
        if (n.status === t.expected && s.networkStatus === t.expected) {
          if (id === t.ids[0]) inRow.completed++;
        } else {
          inRow.wrong++;
          const key = `${t.sanctioned ? `sanctioned/${t.decision}` : t.path}→${n.status}`;
          wrongIn.set(key, (wrongIn.get(key) ?? 0) + 1);
        }
        if (s.screening?.skipped === 'undecryptable' || s.screening?.skipped === 'unreadable')
          inRow.notes.push(`${id}: ${s.screening.skipped}`);
      }
    }
    if (extraIncoming.length)
      inRow.notes.push(`${extraIncoming.length} sent twice by the counterparty's retries (both decided)`);
    if (wrongIn.size) inRow.notes.push(`unexpected outcomes: ${[...wrongIn].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    // The deposits' messages come from the same counterparty: only the incoming transfers' own are counted here.
    const undecided = netIncoming.filter(
      (t) => t.decisions === 0 && (known.has(t.id) || extraIncoming.some((x) => x.id === t.id)),
    ).length;
    if (undecided) inRow.notes.push(`${undecided} undecided at the network`);

    const { rows: book } = await net.query<{ missing: number; extra: number; dup: number }>(
      `with reg as (select address, customer_ref from orchestrator.address_registry where vasp_did = $1),
            net as (select address, customer_ref from addresses where vasp_did = $1)
       select (select count(*)::int from reg where not exists (select 1 from net where net.address = reg.address)) as missing,
              (select count(*)::int from net where not exists (select 1 from reg where reg.address = net.address)) as extra,
              (select count(*)::int from (select address from net group by address having count(*) > 1) d) as dup`,
      [subC.did],
    );
    const b = book[0]!;
    const { rows: regCount } = await orch.query<{ n: number }>(
      'select count(*)::int n from address_registry where vasp_did = $1',
      [subC.did],
    );
    const bookRow: WorkResult = {
      work: `reconciliation (${regCount[0]!.n.toLocaleString('en')} addresses)`,
      total: 1,
      completed: reconcileState.status === 'COMPLETED' && !b.missing && !b.extra ? 1 : 0,
      lost: b.missing,
      duplicated: b.dup + b.extra,
      wrong: 0,
      notes: [
        `run ${reconcileState.status}${reconcileState.error ? `: ${reconcileState.error}` : ''}; missing ${b.missing}, extra ${b.extra}, duplicate ${b.dup}`,
      ],
    };

    // The rotation: done, and a transfer encrypted before it (by the rotated VASP's old key) still decrypts.
    const before =
      outgoing.find((o) => o.originator === rotated && o.transactionId && o.finalAt && o.finalAt < rotationAt) ??
      outgoing.find((o) => o.originator === rotated && o.transactionId);
    let oldKeyDecrypts = false;
    if (before?.transactionId) {
      const info = await call(
        'GET',
        `/tx/info?id=${before.transactionId}&vaspDID=${encodeURIComponent(rotated.did)}`,
        'compliance',
      );
      oldKeyDecrypts = info.status === 200 && JSON.stringify(info.body).includes(before.person.family);
    }
    const keyList = await call('GET', `/v1/vasps/${encodeURIComponent(rotated.did)}/keys`, 'viewer');
    const active = (keyList.body?.keys ?? []).filter((k: Json) => k.state === 'active').length;
    const rotRow: WorkResult = {
      work: 'key rotation',
      total: 1,
      completed: rotationState.workflowStatus === 'COMPLETED' && oldKeyDecrypts && active === 1 ? 1 : 0,
      lost: rotationState.workflowStatus === 'COMPLETED' ? 0 : 1,
      duplicated: active > 1 ? active - 1 : 0,
      wrong: oldKeyDecrypts ? 0 : 1,
      notes: [
        `workflow ${rotationState.workflowStatus ?? 'not final'}; ${(keyList.body?.keys ?? []).length} keys, ${active} active; a transfer from before it ${oldKeyDecrypts ? 'still decrypts' : 'does NOT decrypt'}`,
      ],
    };

    const proofCheck = await checkProofs(proofs, { call, orch, temporalAddress, patienceMs: WATCH_PATIENCE_MS });
    completions['wallet proofs']!.push(...proofCheck.completions);
    const proofRow: WorkResult = {
      work: `wallet proofs (${N_PROOFS} verified, ${N_ODD_PROOFS} rejected, ${N_ODD_PROOFS} expired)`,
      total: proofCheck.total,
      completed: proofCheck.completed,
      lost: proofCheck.lost,
      duplicated: proofCheck.duplicated,
      wrong: proofCheck.wrong,
      notes: proofCheck.notes,
    };
    say(`  ${proofCheck.summary}`);

    const depositCheck = await checkDeposits(deposits, {
      call,
      orch,
      net,
      temporalAddress,
      patienceMs: WATCH_PATIENCE_MS,
    });
    completions.deposits!.push(...depositCheck.completions);
    const depositRow: WorkResult = {
      work: `deposits (${N_DEPOSITS - N_NEVER_DEPOSITS} released, ${N_NEVER_DEPOSITS} returned; each reported twice)`,
      total: depositCheck.total,
      completed: depositCheck.completed,
      lost: depositCheck.lost,
      duplicated: depositCheck.duplicated,
      wrong: depositCheck.wrong,
      notes: depositCheck.notes,
    };
    say(`  ${depositCheck.summary}`);

    // What the custody system was told: one event per final transfer and deposit, the one its outcome calls for.
    const custodySubjects: CustodySubject[] = [
      ...outgoing
        .filter((o) => o.status && FINAL_OUT.has(o.status))
        .map((o): CustodySubject => ({
          id: o.id,
          kind: 'transfer',
          expected: o.status === 'ACCEPTED' ? 'release' : o.originator === subB ? 'either' : 'halt',
        })),
      ...deposits
        .filter((d) => d.id && (d.status === 'RELEASED' || d.status === 'RETURNED'))
        .map((d): CustodySubject => ({
          id: d.id!,
          kind: 'deposit',
          expected: d.status === 'RELEASED' ? 'release' : 'return',
        })),
    ];
    const custodyCheck = await checkCustody(custodyReceiver, custodySubjects, 120_000);
    const custodyRow: WorkResult = {
      work: 'custody callbacks (transfer.*, deposit.*)',
      total: N_OUT + deposits.length,
      completed: custodyCheck.completed,
      lost: custodyCheck.lost,
      duplicated: custodyCheck.duplicated,
      wrong: custodyCheck.wrong,
      notes: custodyCheck.notes,
    };
    say(`  ${custodyCheck.summary}`);

    // What the internal systems were told: every final transfer's report, with its final status.
    const reportSubjects: ReportSubject[] = [
      ...outgoing
        .filter((o) => o.status && FINAL_OUT.has(o.status))
        .map((o): ReportSubject => ({ direction: 'outgoing', id: o.id, status: o.status! })),
      ...incoming.flatMap((t) =>
        t.ids.flatMap((id): ReportSubject[] => {
          const s = incomingState.get(id);
          return s?.finalAt ? [{ direction: 'incoming', id, status: s.networkStatus }] : [];
        }),
      ),
    ];
    const reportCheck = await checkReports(reportReceiver, reportSubjects, 120_000);
    const reportRow: WorkResult = {
      work: 'transfer reports (TRANSFER_CALLBACK_URL)',
      total: N_OUT + incoming.reduce((n, t) => n + Math.max(1, t.ids.length), 0),
      completed: reportCheck.completed,
      lost: reportCheck.lost,
      duplicated: reportCheck.duplicated,
      wrong: reportCheck.wrong,
      notes: reportCheck.notes,
    };
    say(`  ${reportCheck.summary}`);

    // Time to recover: per work, from the last fault's process being back (restarted and ready) to that work's last
    // completion, from the completion times recorded by the system; 0 when it was all done before.
    const rows = [outRow, inRow, bookRow, rotRow, proofRow, depositRow, custodyRow, reportRow];
    const names = [
      'outgoing',
      'incoming',
      'reconciliation',
      'key rotation',
      'wallet proofs',
      'deposits',
      'custody',
      'reports',
    ];
    const calm = Math.max(...events.map((e) => e.done ?? e.at));
    rows.forEach((row, k) => {
      const done = completions[names[k]!]!;
      row.recoverMs = done.length ? Math.max(0, Math.max(...done) - calm) : undefined;
    });
    const faultText =
      `worker ×5 (SIGKILL, ${events.filter((e) => e.kind === 'worker' && e.pauseMs >= LONG_PAUSE_MS).length} with a ${LONG_PAUSE_MS / 1000} s pause), ` +
      `${temporalServer.label} ×1 (${temporalServer.killSignal}, ${temporalDown(events)}), API ×1, sandbox ×1 (SIGKILL)` +
      (networkFaultsOn
        ? `; network: ${Object.entries(injectedNetwork)
            .filter(([, v]) => v)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`
        : '');
    const quotaText =
      `; network quota ${networkFaultsOn ? `lowered to ${LOWERED_QUOTA.limit} per ${LOWERED_QUOTA.windowSeconds} s` : '6,000 per 300 s'}: ` +
      `${quotaTotals.rejected} × 429, ${quotaTotals.lockouts} lockouts`;
    results.push({
      round,
      faults: faultText + quotaText,
      rows,
      proofSummary: proofCheck.summary,
      depositSummary: depositCheck.summary,
      custodySummary: custodyCheck.summary,
      seconds: (Date.now() - t0) / 1000,
      quota: { ...quotaTotals },
    });
    say(`  network quota: ${quotaTotals.rejected} calls answered 429, ${quotaTotals.lockouts} lockouts`);
    for (const k of Object.keys(injectedNetwork)) delete injectedNetwork[k];
    for (const r of rows) if (r.notes.length) say(`  ${r.work}: ${r.notes.slice(0, 5).join('; ')}`);
  }

  // The secrets scan: stored and decoded history, logs, both schemas.
  const scan = await secretsScan({
    temporalAddress,
    codecKeys,
    databaseUrl,
    logDir,
    outDir: resolve(dataDir, 'scan'),
    orch,
    masterKey,
    vaspDids: [group.gateway.did, ...group.subsidiaries.map((s) => s.did)],
    needles,
    walletKeys,
    temporalStorage: temporalServer.storage,
  });

  // The report.
  const cpu = cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, Node ${process.version}, load average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
  const lines: string[] = [];
  lines.push(`seed ${SEED}, scale ${SCALE}, ${new Date().toISOString()}, ${machine}`);
  lines.push(`Temporal: ${temporalServer.label}, restarted once per round after a ${temporalServer.killSignal}`);
  lines.push('');
  lines.push('| round | work | faults injected | completed | lost | duplicated | wrong outcome | time to recover |');
  lines.push('|---|---|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    for (const [k, row] of r.rows.entries()) {
      lines.push(
        `| ${k ? '' : r.round === 2 ? '2 (network faults)' : '1'} | ${row.work} | ${k ? '〃' : `${r.faults}; ${r.seconds.toFixed(0)} s`} | ${row.completed}/${row.total} | ${row.lost} | ${row.duplicated} | ${row.wrong} | ${row.recoverMs === undefined ? '–' : `${(row.recoverMs / 1000).toFixed(0)} s`} |`,
      );
    }
  }
  lines.push('');
  for (const r of results) lines.push(`round ${r.round} ${r.proofSummary}`);
  for (const r of results) lines.push(`round ${r.round} ${r.depositSummary}`);
  for (const r of results) lines.push(`round ${r.round} ${r.custodySummary}`);
  lines.push('');
  lines.push(...scanLines(scan));
  say('');
  for (const l of lines) say(l);
  writeFileSync(resolve(dataDir, 'chaos-report.md'), `${lines.join('\n')}\n`);
  // Round 1 runs at the network's real quota, which the group's shared budget must keep it under: one lockout fails it.
  const lockedOut = results.some((r) => r.round !== 2 && (r.quota.lockouts > 0 || r.quota.rejected > 0));
  if (lockedOut) say("\nthe group's budget let the network lock it out at the real quota (round 1)");
  const bad =
    results.some((r) => r.rows.some((row) => row.lost || row.duplicated || row.wrong || row.completed < row.total)) ||
    scan.failed ||
    lockedOut;
  say(
    bad
      ? '\nCHAOS CHECK FAILED (see the table and the notes above)'
      : '\nchaos check: 0 lost, 0 duplicated, every outcome as expected, 0 secrets found',
  );
  say(`(total ${((Date.now() - started) / 1000).toFixed(0)} s; report in ${resolve(dataDir, 'chaos-report.md')})`);

  await orch.end();
  await net.end();
  const done = cleanUp;
  cleanUp = undefined;
  await done?.();
  return bad ? 1 : 0;
}

/** How long the Temporal server was down at its restart: from the kill until it answered again. */
function temporalDown(events: FaultEvent[]): string {
  const e = events.find((x) => x.kind === 'temporal');
  return e?.done === undefined ? 'not restarted' : `back in ${((e.done - e.at) / 1000).toFixed(1)} s`;
}

/** When a transfer reached its final status, from its own history (the last entry's time). */
function finishedAt(history: { at: string }[] | undefined): number {
  const at = Date.parse(history?.at(-1)?.at ?? '');
  return Number.isFinite(at) ? at : Date.now();
}

function scanLines(scan: ScanResult): string[] {
  const out = [
    'Secrets scan (plaintext personal data and private keys of the run):',
    '',
    '| where | searched | outgoing personal data | incoming personal data | private keys and master keys |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const s of scan.sources)
    out.push(
      `| ${s.name} | ${s.bytes.toLocaleString('en')} bytes | ${s.hits.outgoingPii} | ${s.hits.incomingPii} | ${s.hits.keys} |`,
    );
  out.push(
    '',
    `needles: ${scan.needles.outgoingPii} outgoing and ${scan.needles.incomingPii} incoming personal-data values, ${scan.needles.keys} key encodings`,
  );
  for (const n of scan.notes) out.push(n);
  return out;
}

async function networkToken(sandboxUrl: string, c: { clientId: string; clientSecret: string }): Promise<string> {
  return retry(async () => {
    const r = await fetch(`${sandboxUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: c.clientId,
        client_secret: c.clientSecret,
        grant_type: 'client_credentials',
        audience: sandboxUrl,
      }),
    });
    if (!r.ok) throw new Error(`token: ${r.status}`);
    return ((await r.json()) as { access_token: string }).access_token;
  });
}

async function networkCall(
  sandboxUrl: string,
  bearer: string,
  method: string,
  path: string,
  body: unknown,
): Promise<Json> {
  const r = await fetch(`${sandboxUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${(await r.text()).slice(0, 200)}`);
  return r.json();
}

async function retry<T>(fn: () => Promise<T>, attempts = 60): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i >= attempts) throw e;
      await sleep(1000);
    }
  }
}

export type { Pool };

main().then(
  (code) => process.exit(code),
  async (e: unknown) => {
    process.stderr.write(`npm run chaos failed: ${(e as Error).stack ?? String(e)}\n`);
    await cleanUp?.().catch((c: Error) => process.stderr.write(`and cleaning up failed: ${c.message}\n`));
    process.exit(2);
  },
);
