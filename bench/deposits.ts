/**
 * npm run bench:deposits — deposits the custody system reports (issue 23), on the real stack (Temporal dev server,
 * PostgreSQL, the sandbox over HTTP, the project's API here and a worker process). Every deposit belongs to a transfer
 * the network already holds ACCEPTED at the subsidiary (the originator's Travel Rule data came first, the common case),
 * without its txHash yet, to an address of the subsidiary in the group's registry. In the same run:
 *   baseline: the sandbox's own matching: each deposit reported straight to `POST /tx/notify` (as the gateway's
 *             credentials report it for the subsidiary), timed from the call to the network's answer naming the
 *             matched, ACCEPTED message. The rate is found on a ladder (BENCH_RATES, default 5,10,20,40,80 per
 *             second, BENCH_SECONDS each, default 5, after a discarded warm-up): the highest rate with no error, the
 *             calls keeping up (≥ 90 % of the rate) and p99 at most 2× the first rate's;
 *   measured: the same number of deposits reported to the orchestrator's `POST /v1/deposits` at that rate, timed from
 *             the POST to the deposit's `decided_at` (RELEASED, the orchestrator's own record, read from its table),
 *             with each process's CPU per deposit from the first POST to the last RELEASED.
 * Target: p99(measured) ≤ 1.2 × p99(baseline), printed with PASS/FAIL. Then where the measured time goes, from the
 * workflows' histories (intake, the first workflow task, the first check with its network calls, rechecks, the
 * release's write) and the gateway's tx/list, which the first check reads before it reports.
 *
 * Second scenario (BENCH_LATE=off skips it), at the same rate: each deposit reported before its transfer, which the
 * sandbox's simulated originator sends BENCH_ORIGINATOR_DELAY seconds (default 30, issue 23's example) after the
 * report. Baseline: tx/notify (a new INCOMPLETE message) → completed by the originator at the network. Measured:
 * POST /v1/deposits → RELEASED, which adds the incoming workflow's screening and acceptance (the gateway's webhook is
 * registered for this part) and the deposit's rechecks; the same ratio and target, and the phases.
 *
 * The deposit workflow runs with an operator's settings for fast matching, printed: DEPOSIT_RECHECK_INITIAL 1s and
 * DEPOSIT_RECHECK_MAX 5s (BENCH_DEPOSIT_RECHECK_INITIAL, BENCH_DEPOSIT_RECHECK_MAX), the default 1h match window.
 * Shorter waits would spend the network's quota (20 calls/s) on held deposits: 100 of them at 5 s are 20 calls/s.
 *
 * Last, the cost in counts (issue 27; BENCH_COST=off skips it): the orchestrator schema's rows written around the
 * measured run, and the histories of up to 50 sampled deposit workflows of each scenario beside a few empty workflows
 * of the floor, run for their counts only (bench/cost.ts).
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { execSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createDidKeyRecord } from '../lib/crypto';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { createPool } from '../db/pool';
import { simulateTransfer } from '../sandbox/nested-routing/simulate-client';
import type { Seed } from '../sandbox/seed';
import { groupSeed, testEnv } from '../test/harness/platform';
import { cpuLine } from './cpu';
import { quantile } from './stats';
import { costBlock, costLines, dbWrites, describeWrites, sampledCost, writesPer, type CostSummary } from './cost';
import { runFloor } from './floor';
import {
  apiWithWorkerProcesses,
  benchOptions,
  cpuPerTransfer,
  cpuSnapshot,
  setupBenchTemporal,
  spawnSandbox,
  type ApiWithWorkers,
} from './topology';

// JSON bodies of HTTP answers, read field by field.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const RATES = (process.env.BENCH_RATES ?? '5,10,20,40,80').split(',').map(Number);
if (RATES.some((r) => !(r > 0))) throw new Error(`BENCH_RATES: "${process.env.BENCH_RATES}" is not a list of rates`);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TARGET_RATIO = 1.2;
/** A rung is sustained while its p99 stays within this factor of the first rung's (and nothing fails). */
const SUSTAIN_FACTOR = 2;
const LOST_AFTER_MS = Number(process.env.BENCH_LOST_AFTER_MS ?? 120_000);
const RECHECK_INITIAL = process.env.BENCH_DEPOSIT_RECHECK_INITIAL ?? '1s';
const RECHECK_MAX = process.env.BENCH_DEPOSIT_RECHECK_MAX ?? '5s';
/** The late scenario: the simulated originator sends its transfer this long after the deposit's report (issue 23's 30 s). */
const ORIGINATOR_DELAY_S = Number(process.env.BENCH_ORIGINATOR_DELAY ?? 30);
const LATE = process.env.BENCH_LATE !== 'off';
/** 1.5 ETH: above FATF's 1,000 USD threshold at the embedded price table's ETH price, so it is matched at the network. */
const AMOUNT = '1500000000000000000';
/** The simulated originator's sending address (simulateTransfer's default origin): the custody system saw it. */
const ORIGIN = `0x${'55'.repeat(20)}`;

const say = (line: string) => process.stdout.write(`${line}\n`);
const ms = (n: number) => `${Math.round(n)} ms`;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
const durationMs = (s: string) => {
  const m = /^(\d+)(ms|s|m)$/.exec(s);
  if (!m) throw new Error(`"${s}" is not a duration like 500ms, 1s or 1m`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
};
const line = (name: string, xs: number[]) =>
  `${name.padEnd(58)} p50 ${ms(quantile(xs, 0.5)).padStart(7)}   p99 ${ms(quantile(xs, 0.99)).padStart(7)}   max ${ms(Math.max(...xs)).padStart(7)}`;

/** A transfer the network holds ACCEPTED at the subsidiary, to `destination`, with no txHash: a deposit to report. */
interface Prepared {
  /** Absent for a deposit reported before its transfer (the simulated originator sends it later). */
  transactionId?: string;
  destination: string;
}

/** Calls paced at `rate` per second; answers each call's result with the time it was sent (epoch ms). */
async function paced<T>(rate: number, n: number, call: (i: number) => Promise<T>): Promise<{ at: number; r: T }[]> {
  const started = Date.now();
  const out: Promise<{ at: number; r: T }>[] = [];
  for (let i = 0; i < n; i++) {
    const wait = started + (i * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    const at = Date.now();
    out.push(call(i).then((r) => ({ at, r })));
  }
  return Promise.all(out);
}

/**
 * The sandbox in a process of its own (as bench:transfers and bench:validate run it), its test routes on: in the bench's
 * process it would share one event loop with the API, and the baseline would not be the network's alone.
 */
async function sandboxProcess(seed: Seed) {
  const testToken = randomBytes(24).toString('hex');
  const child = await spawnSandbox(seed, { testToken });
  const pool = createPool(testEnv().databaseUrl, 'sandbox');
  return {
    ...child,
    testToken,
    pool,
    testHeaders: (more: Record<string, string> = {}) => ({ authorization: `Bearer ${testToken}`, ...more }),
    token: async (c: { clientId: string; clientSecret: string }) => {
      const r = await fetch(`${child.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: c.clientId,
          client_secret: c.clientSecret,
          grant_type: 'client_credentials',
          audience: child.url,
        }),
      });
      if (!r.ok) throw new Error(`token request failed: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { access_token: string }).access_token;
    },
    simulateCounterparty: async (did: string) => {
      const r = await fetch(`${child.url}/sandbox/counterparties/${did}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      if (r.status !== 200) throw new Error(`PUT /sandbox/counterparties/${did}: ${r.status} ${await r.text()}`);
    },
    close: async () => {
      await pool.end();
      await child.close();
    },
  };
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const options = benchOptions();
  const temporal = await setupBenchTemporal(options);
  const g = groupSeed();
  const sb = await sandboxProcess(g.seed);
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  const orchestratorTables = createPool(testEnv().databaseUrl, 'orchestrator');
  let orch: ApiWithWorkers | undefined;
  const connection = await Connection.connect({ address: testEnv().temporalAddress });
  const temporalClient = new Client({ connection });
  try {
    const token = await sb.token(g.gatewayUser);
    const sandbox = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${sb.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Json };
    };
    for (const [did, key] of [
      [g.gateway, gatewayKey],
      [g.subA, subAKey],
    ] as const) {
      await sandbox('POST', '/tf/vasps/update', {
        did,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }],
      });
    }
    await sb.simulateCounterparty(g.external);
    const depositSettings = {
      recheckInitialMs: durationMs(RECHECK_INITIAL),
      recheckMaxMs: durationMs(RECHECK_MAX),
      matchWindowMs: 3_600_000,
      dataDeadlineMs: 72 * 3_600_000,
    };
    // No notification webhook: the transfers are answered here before their deposits are reported, and no incoming
    // workflow should compete with the deposits' for the worker. The incoming poll is pushed out of the run for the same
    // reason.
    orch = await apiWithWorkerProcesses({
      network: sb.networkConfig(g.gatewayUser),
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      transfers: {},
      incoming: { pollInterval: '1h' },
      deposits: depositSettings,
      workers: options.workerCounts[0]!,
      masterKey: randomBytes(32).toString('base64'),
    });
    const o = orch;

    /** `n` fresh addresses of the subsidiary in the group's registry. */
    const register = async (n: number): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < n; i += 200) {
        const batch = Array.from({ length: Math.min(200, n - i) }, () => `0x${randomBytes(20).toString('hex')}`);
        const r = await fetch(`${o.apiUrl}/v1/addresses`, {
          method: 'PUT',
          headers: o.headers('operator', { 'content-type': 'application/json' }),
          body: JSON.stringify({
            addresses: batch.map((address) => ({
              vaspDID: g.subA,
              asset: 'ETH',
              address,
              customerRef: `c-${address}`,
            })),
          }),
        });
        if (!r.ok) throw new Error(`registry upsert failed: ${r.status} ${await r.text()}`);
        out.push(...batch);
      }
      return out;
    };
    /** `n` transfers from the simulated originator to the subsidiary, confirmed and accepted by it, no txHash. */
    const prepare = async (n: number): Promise<Prepared[]> => {
      const destinations = await register(n);
      const out: Prepared[] = [];
      for (let k = 0; k < destinations.length; k += 25) {
        out.push(
          ...(await Promise.all(
            destinations.slice(k, k + 25).map(async (destination) => {
              const sent = await simulateTransfer(sb, { from: g.external, to: g.subA, destination, amount: AMOUNT });
              for (const action of ['confirm', 'accept']) {
                const a = await sandbox('POST', `/tx/${action}`, { id: sent.id });
                if (a.status !== 200) throw new Error(`tx/${action}: ${a.status} ${JSON.stringify(a.body)}`);
              }
              return { transactionId: sent.id, destination };
            }),
          )),
        );
      }
      return out;
    };
    const txHash = () => `0x${randomBytes(32).toString('hex')}`;

    /** The sandbox's own matching: tx/notify straight to the network, call → answer naming the ACCEPTED message. */
    const baseline = async (rate: number, deposits: Prepared[]) => {
      const started = Date.now();
      const results = await paced(rate, deposits.length, async (i) => {
        const d = deposits[i]!;
        const t0 = performance.now();
        const r = await sandbox('POST', '/tx/notify', {
          txHash: txHash(),
          transactionAmount: AMOUNT,
          transactionAsset: 'ETH',
          destination: d.destination,
          beneficiaryVASPdid: g.subA,
          origin: ORIGIN,
          customerRef: `bench-${i}`,
        }).catch((e: Error) => ({ status: 0, body: { error: e.message } as Json }));
        const latency = performance.now() - t0;
        const ok = r.status === 200 && r.body.id === d.transactionId && r.body.status === 'ACCEPTED';
        return { latency, ok };
      });
      const seconds = (Date.now() - started) / 1000;
      return {
        latencies: results.filter((x) => x.r.ok).map((x) => x.r.latency),
        errors: results.filter((x) => !x.r.ok).length,
        throughput: results.length / seconds,
      };
    };

    /** The orchestrator: POST /v1/deposits → RELEASED (the deposit's decided_at), at `rate`. */
    const measured = async (rate: number, deposits: Prepared[]) => {
      const results = await paced(rate, deposits.length, async (i) => {
        const d = deposits[i]!;
        const r = await fetch(`${o.apiUrl}/v1/deposits`, {
          method: 'POST',
          headers: o.headers('operator', { 'content-type': 'application/json' }),
          body: JSON.stringify({
            vaspDid: g.subA,
            asset: 'ETH',
            txHash: txHash(),
            to: d.destination,
            from: ORIGIN,
            amount: AMOUNT,
          }),
        });
        const body = (await r.json()) as Json;
        if (r.status !== 201) throw new Error(`POST /v1/deposits: ${r.status} ${JSON.stringify(body)}`);
        return { id: body.id as string, transactionId: d.transactionId };
      });
      const sentAt = new Map(results.map((x) => [x.r.id, x.at]));
      const ids = [...sentAt.keys()];
      const deadline = Date.now() + LOST_AFTER_MS;
      type Row = {
        id: string;
        status: string;
        transaction_id: string | null;
        created_at: Date;
        decided_at: Date | null;
      };
      let rows: Row[] = [];
      for (;;) {
        rows = (
          await orchestratorTables.query<Row>(
            'select id, status, transaction_id, created_at, decided_at from deposits where id = any($1::text[])',
            [ids],
          )
        ).rows;
        if (rows.every((r) => r.decided_at) || Date.now() > deadline) break;
        await sleep(200);
      }
      const expected = new Map(results.map((x) => [x.r.id, x.r.transactionId]));
      const released = rows.filter((r) => r.status === 'RELEASED');
      const wrongMatch = released.filter(
        (r) => expected.get(r.id) !== undefined && r.transaction_id !== expected.get(r.id),
      ).length;
      return {
        ids,
        sentAt,
        latencies: released.map((r) => r.decided_at!.getTime() - sentAt.get(r.id)!),
        intake: rows.map((r) => r.created_at.getTime() - sentAt.get(r.id)!),
        notReleased: rows.length - released.length + (ids.length - rows.length),
        wrongMatch,
        decidedAt: new Map(released.map((r) => [r.id, r.decided_at!.getTime()])),
        transactionIds: new Map(released.map((r) => [r.id, r.transaction_id!])),
      };
    };

    /** When each of the sandbox's messages was completed by its originator's create, and accepted, by id (epoch ms). */
    const networkTimes = async (ids: string[]) => {
      const { rows } = await sb.pool.query<{ id: string; body: { actions: { action: string; createdAt: string }[] } }>(
        'select id, body from transactions where id = any($1::uuid[])',
        [ids],
      );
      const at = (b: { actions: { action: string; createdAt: string }[] }, a: string) => {
        const found = b.actions.find((x) => x.action === a);
        return found ? Date.parse(found.createdAt) : undefined;
      };
      return new Map(rows.map((r) => [r.id, { created: at(r.body, 'create'), accepted: at(r.body, 'accept') }]));
    };

    /**
     * The baseline of a deposit reported before its transfer: tx/notify answers a new INCOMPLETE message, which the
     * simulated originator completes ORIGINATOR_DELAY seconds later; the call → completed at the network (the create in
     * the message's history, when the network has matched the originator's transfer to the report).
     */
    const lateBaseline = async (rate: number, destinations: string[]) => {
      const results = await paced(rate, destinations.length, async (i) => {
        const r = await sandbox('POST', '/tx/notify', {
          txHash: txHash(),
          transactionAmount: AMOUNT,
          transactionAsset: 'ETH',
          destination: destinations[i],
          beneficiaryVASPdid: g.subA,
          origin: ORIGIN,
          customerRef: `bench-late-${i}`,
        }).catch(() => undefined);
        return r?.status === 200 && r.body.status === 'INCOMPLETE' ? (r.body.id as string) : undefined;
      });
      const sent = results.filter((x) => x.r !== undefined) as { at: number; r: string }[];
      const deadline = Date.now() + ORIGINATOR_DELAY_S * 1000 + LOST_AFTER_MS;
      let times = await networkTimes(sent.map((x) => x.r));
      while ([...times.values()].some((t) => t.created === undefined) && Date.now() < deadline) {
        await sleep(500);
        times = await networkTimes(sent.map((x) => x.r));
      }
      const done = sent.filter((x) => times.get(x.r)?.created !== undefined);
      return {
        latencies: done.map((x) => times.get(x.r)!.created! - x.at),
        errors: results.length - done.length,
      };
    };

    const load = () =>
      loadavg()
        .map((x) => x.toFixed(2))
        .join(' ');
    // BENCH_COMMIT: the commit a copy of the tree outside the checkout was taken from.
    let commit = process.env.BENCH_COMMIT ?? '';
    if (!commit)
      try {
        commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
      } catch {
        /* not a checkout */
      }
    say(
      `deposits (${temporal.label}, ${options.workerCounts[0]} worker process): ${cpus().length} cores (${cpus()[0]?.model}), load ${load()}, commit ${commit}, ${new Date().toISOString()}`,
    );
    say(
      `deposit workflow settings: DEPOSIT_RECHECK_INITIAL=${RECHECK_INITIAL}, DEPOSIT_RECHECK_MAX=${RECHECK_MAX}, DEPOSIT_MATCH_WINDOW=1h, DEPOSIT_DATA_DEADLINE=72h`,
    );
    say(
      `each deposit's transfer is ACCEPTED at the subsidiary before it is reported (no txHash yet); ${SECONDS} s per rate`,
    );

    // Warm-ups (JIT, pools, caches of a fresh stack), discarded: the first rung's size, once per path.
    const warm = Math.round(RATES[0]! * SECONDS);
    const maxRate = Math.max(...RATES);
    // Each rung's transfers are prepared before it, so a ladder that stops early prepares no more than it uses.
    await baseline(RATES[0]!, await prepare(warm));
    let rate: number | undefined;
    let base: Awaited<ReturnType<typeof baseline>> | undefined;
    let firstP99: number | undefined;
    for (const probe of RATES) {
      const r = await baseline(probe, await prepare(Math.round(probe * SECONDS)));
      const p99 = quantile(r.latencies, 0.99);
      firstP99 ??= p99;
      const sustained = !r.errors && r.throughput >= 0.9 * probe && p99 <= SUSTAIN_FACTOR * firstP99;
      say(
        `${line(`  baseline at ${probe}/s: tx/notify → matched (ACCEPTED)`, r.latencies)}   ${r.throughput.toFixed(1)}/s${r.errors ? `, ${r.errors} errors` : ''}${sustained ? '' : '  (not sustained)'}`,
      );
      if (!sustained) break;
      [rate, base] = [probe, r];
    }
    if (!rate || !base) throw new Error(`the sandbox's notify is not sustained even at ${RATES[0]}/s`);
    say(
      `rate: ${rate}/s, the highest of ${RATES.join(', ')}/s the sandbox's notify sustains (no error, ≥ 90 % of the rate, p99 ≤ ${SUSTAIN_FACTOR}× the first rate's)${rate === maxRate ? ' — the ladder’s top: add higher rates to BENCH_RATES to go further' : ''}`,
    );

    const n = Math.round(rate * SECONDS);
    const t1 = Date.now();
    const ours = await prepare(warm + n);
    // The transfers for the orchestrator plus a baseline again at the rate, right before it, so both are measured on
    // the same state of the sandbox's tables.
    const again = await prepare(n);
    say(`prepared ${ours.length + again.length} more in ${((Date.now() - t1) / 1000).toFixed(0)} s`);
    await measured(RATES[0]!, ours.slice(0, warm));
    const base2 = await baseline(rate, again);
    say(
      `${line(`baseline at ${rate}/s again, before the orchestrator`, base2.latencies)}   ${base2.throughput.toFixed(1)}/s`,
    );
    const baseLatencies = [...base.latencies, ...base2.latencies];
    // What a deposit costs in counts (issue 27): the orchestrator's writes around the measured run, and after everything
    // is timed, the histories of a sample of its workflows. BENCH_COST=off: none of it.
    const costing = process.env.BENCH_COST !== 'off';
    const writesBefore = costing ? await dbWrites(orchestratorTables) : undefined;
    const cpuParts = { temporal, workerPids: o.workerPids, sandboxPid: sb.pid };
    const cpu0 = await cpuSnapshot(cpuParts);
    const m = await measured(rate, ours.slice(warm));
    const cpu = cpuPerTransfer(cpu0, await cpuSnapshot(cpuParts), m.ids.length);
    const writes =
      writesBefore &&
      describeWrites(
        `${m.ids.length} deposits, each transfer there first`,
        writesPer(writesBefore, await dbWrites(orchestratorTables), m.ids.length),
      );
    say(line(`baseline at ${rate}/s, both runs: tx/notify → matched`, baseLatencies));
    say(line(`orchestrator at ${rate}/s: POST /v1/deposits → RELEASED`, m.latencies));
    say(line(`  of which POST → row stored (created_at)`, m.intake));
    // Until the last deposit is RELEASED, so each process's per-second costs (pollers, the sandbox's loops) count too.
    say(`  ${cpuLine(cpu, 'deposit')}`);
    const ratio = quantile(m.latencies, 0.99) / quantile(baseLatencies, 0.99);
    const pass = ratio <= TARGET_RATIO && !m.notReleased && !m.wrongMatch;
    say(
      `ratio p99 orchestrator / baseline at ${rate}/s: ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×); not released ${m.notReleased}, matched to another transfer ${m.wrongMatch}: ${pass ? 'PASS' : 'FAIL'}`,
    );

    // Where the time goes: the workflows' histories of a sample (every 10th deposit, and the 5 slowest).
    const byLatency = [...m.decidedAt.keys()].sort(
      (a, b) => m.decidedAt.get(a)! - m.sentAt.get(a)! - (m.decidedAt.get(b)! - m.sentAt.get(b)!),
    );
    const sample = [...new Set([...byLatency.filter((_, i) => i % 10 === 0), ...byLatency.slice(-5)])];
    const phases: Record<string, number[]> = {};
    const add = (k: string, v: number) => (phases[k] ??= []).push(v);
    let rechecked = 0;
    for (const id of sample) {
      const history = await temporalClient.workflow.getHandle(workflowIds.deposit(id)).fetchHistory();
      const events = history.events ?? [];
      const time = (e: (typeof events)[number]) =>
        Number(e.eventTime!.seconds) * 1000 + Math.round((e.eventTime!.nanos ?? 0) / 1e6);
      const sent = m.sentAt.get(id)!;
      const started = events.find((e) => e.workflowExecutionStartedEventAttributes)!;
      add('POST → workflow started', time(started) - sent);
      const firstTask = events.find((e) => e.workflowTaskStartedEventAttributes);
      if (firstTask) add('workflow started → first task started', time(firstTask) - time(started));
      const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes);
      const checks = scheduled.filter(
        (e) => e.activityTaskScheduledEventAttributes!.activityType?.name === 'checkDeposit',
      );
      if (checks.length > 1) rechecked++;
      const first = checks[0];
      if (first) {
        const id0 = first.eventId!.toString();
        const startedAct = events.find(
          (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === id0,
        );
        const completed = events.find(
          (e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === id0,
        );
        if (startedAct) add('first check: scheduled → picked up by the worker', time(startedAct) - time(first));
        if (startedAct && completed)
          add('first check: running (tx/list + tx/notify)', time(completed) - time(startedAct));
        if (completed) add('first check done → RELEASED (decided_at)', m.decidedAt.get(id)! - time(completed));
      }
      add('POST → RELEASED', m.decidedAt.get(id)! - sent);
    }
    say(`where the time goes (${sample.length} sampled workflows; ${rechecked} needed more than one check):`);
    for (const [k, xs] of Object.entries(phases)) say(line(`  ${k}`, xs));
    // The first check reads the gateway's tx/list before it reports; that call on its own, at the sandbox.
    const lists: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      await sandbox(
        'GET',
        `/tx/list?vaspDID=${encodeURIComponent(g.gateway)}&page=0&txDirection=incoming&status=SENT&status=ACK&status=NOT_READY`,
      );
      lists.push(performance.now() - t);
    }
    say(line(`  the gateway's tx/list alone (100 calls, one at a time)`, lists));
    let latePass = true;
    let lateIds: string[] = [];
    if (LATE) {
      // B: the deposit reported before its transfer; the simulated originator supplies it ORIGINATOR_DELAY seconds later.
      const [lateBase, lateOurs] = [await register(n), await register(n)];
      const configured = await fetch(`${sb.url}/sandbox/counterparties/${encodeURIComponent(g.external)}/deposits`, {
        method: 'PUT',
        headers: sb.testHeaders({ 'content-type': 'application/json' }),
        body: JSON.stringify(Object.fromEntries([...lateBase, ...lateOurs].map((d) => [d, ORIGINATOR_DELAY_S]))),
      });
      if (!configured.ok) throw new Error(`simulated originator: ${configured.status} ${await configured.text()}`);
      say(
        `late originator: ${n} deposits per path at ${rate}/s, each reported before its transfer, which the simulated originator sends ${ORIGINATOR_DELAY_S} s later`,
      );
      const lb = await lateBaseline(rate, lateBase);
      say(
        `${line(`baseline: tx/notify → completed at the network`, lb.latencies)}${lb.errors ? `   ${lb.errors} not completed` : ''}`,
      );
      // The completed transfer is screened and accepted by the incoming workflow, which the gateway's webhook starts.
      const hook = await sandbox('POST', '/webhook', {
        vaspDID: g.gateway,
        url: `${o.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
      });
      o.webhooks.notification[g.gateway] = hook.body.secret as string;
      const lm = await measured(
        rate,
        lateOurs.map((destination) => ({ destination })),
      );
      say(line(`orchestrator: POST /v1/deposits → RELEASED`, lm.latencies));
      lateIds = lm.ids;
      const times = await networkTimes([...lm.transactionIds.values()]);
      const phase = (f: (id: string, t: { created?: number; accepted?: number }) => number | undefined) =>
        [...lm.transactionIds].flatMap(([id, tx]) => {
          const v = f(id, times.get(tx) ?? {});
          return v === undefined || Number.isNaN(v) ? [] : [v];
        });
      say(
        line(
          `  POST → completed at the network`,
          phase((id, t) => t.created && t.created - lm.sentAt.get(id)!),
        ),
      );
      say(
        line(
          `  completed → ACCEPTED (the incoming workflow)`,
          phase((_, t) => t.accepted && t.created && t.accepted - t.created),
        ),
      );
      say(
        line(
          `  ACCEPTED → RELEASED (the deposit's next check)`,
          phase((id, t) => t.accepted && lm.decidedAt.get(id)! - t.accepted),
        ),
      );
      const lateRatio = quantile(lm.latencies, 0.99) / quantile(lb.latencies, 0.99);
      latePass = lateRatio <= TARGET_RATIO && !lm.notReleased && !lb.errors;
      say(
        `ratio p99 orchestrator / baseline, originator ${ORIGINATOR_DELAY_S} s late, at ${rate}/s: ${lateRatio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×); not released ${lm.notReleased}: ${latePass ? 'PASS' : 'FAIL'}`,
      );
    }
    if (costing) {
      const address = testEnv().temporalAddress;
      const rows: (CostSummary | string)[] = [
        await sampledCost(address, 'deposit (transfer there first)', m.ids.map(workflowIds.deposit), testEnv().keyring),
      ];
      if (lateIds.length)
        rows.push(
          await sampledCost(
            address,
            `deposit (originator ${ORIGINATOR_DELAY_S} s late)`,
            lateIds.map(workflowIds.deposit),
            testEnv().keyring,
          ),
        );
      // The empty workflow beside them, run here only for its counts (a few workflows, no timing).
      if (process.env.BENCH_FLOOR !== 'off' && !options.cluster) {
        const floor = await runFloor({
          address,
          keyring: testEnv().keyring,
          rate: 10,
          seconds: 2,
          eager: false,
          warmUp: 0,
          serverPid: temporal.temporalPid(),
        });
        rows.push(
          await sampledCost(address, 'floorWorkflow (empty, one local activity)', floor.workflowIds, testEnv().keyring),
        );
      }
      say(
        `\n${costBlock('cost per workflow, sampled after the timed runs', [], [...costLines(rows), ...(writes ? [`database writes, ${writes}`] : [])])}`,
      );
    }
    say(`load after the run ${load()}`);
    if (!pass || !latePass) process.exitCode = 1;
  } finally {
    await orch?.close();
    await connection.close();
    await sb.close();
    await orchestratorTables.end();
    await temporal.teardown();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: Error) => {
    process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  },
);
