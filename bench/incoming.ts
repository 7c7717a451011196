/**
 * npm run bench:incoming — incoming transfers at the gateway, on the real stack (Temporal dev server, PostgreSQL, the
 * sandbox over HTTP, the project's worker and API). In the same run:
 *   baseline:     the sandbox routes by itself (addresses in the subsidiary's address book at the network):
 *                 create → confirmed (ACK) at the network;
 *   orchestrator: the addresses are only in the group's registry, so the network leaves the message at the gateway and
 *                 the notification webhook starts the incoming-transfer workflow, which redirects and confirms:
 *                 first webhook received → confirmed at the network.
 * Transfers are sent at BENCH_RATE per second (default 100) for BENCH_SECONDS (default 10). Latencies come from the
 * servers' own timestamps (the network's action log, the webhook receipt), so polling adds no error.
 * Last, the Temporal floor at the same rate (bench/floor.ts): empty workflows of one local activity, started and awaited
 * through the same server — what this machine allows any workflow-based flow before the project's own work.
 * Target: p99 under 250 ms at 100 transfers/s.
 * After each orchestrator run, the three slowest transfers and the median one split into the API and the start, the
 * first workflow task's wait and the worker's run of it (bench/tail.ts; BENCH_TAIL=off skips it).
 * Then the cost in counts (issue 27; BENCH_COST=off skips it): the orchestrator schema's rows written around the first
 * measured run, and the histories of up to 50 sampled incoming workflows and of the floor's (bench/cost.ts).
 *
 * `--find-rate` or BENCH_RATE=find (issue #11's incoming target): first finds the highest rate at which the sandbox's own
 * routing keeps its p99 under 250 ms (after a discarded warm-up, the baseline at each of BENCH_RATES, default
 * 2,5,10,15,20,25,30,40 per second, for BENCH_SECONDS each, stopping at the first rate that misses), prints it, then runs
 * the orchestrator at that rate (after the same warm-up):
 * target webhook→confirmed p99 at most 1.2× the baseline's p99 at the same rate.
 *
 * `--cluster` or BENCH_TEMPORAL=cluster: on the Temporal server on PostgreSQL; `--workers=1,2` or BENCH_WORKERS=1,2:
 * the orchestrator's scenario once per worker-process count (the API stays in this process, with the sandbox). Each
 * run checks that every transfer was confirmed (lost: not within BENCH_LOST_AFTER_MS, default 120 s) and confirmed or
 * redirected once (duplicated), and prints each process's CPU per transfer.
 *
 * BENCH_VARIANT (worker settings, `NAME=value …`, as bench:transfers' `variant` path): after the runs above, the
 * orchestrator's scenario again in 2 × BENCH_VARIANT_PAIRS + 1 rounds (default 2 pairs) alternating a worker without
 * and with them, each on-round against its neighbours' mean (bench/alternation.ts). Each round is BENCH_RATE ×
 * BENCH_SECONDS transfers, like the runs above (BENCH_VARIANT_TRANSFERS and _RATE are bench:transfers' only).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { simulateTransfer } from '../sandbox/nested-routing/simulate-client';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createDidKeyRecord } from '../lib/crypto';
import { createPool } from '../db/pool';
import { groupSeed, startSandbox, testEnv } from '../test/harness/platform';
import { describeFloor, runFloor } from './floor';
import { costBlock, costLines, dbWrites, describeWrites, sampledCost, writesPer } from './cost';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { cpuLine } from './cpu';
import { quantile } from './stats';
import { slowestSplits, tailLines, type TransferTimes } from './tail';
import {
  alternation,
  alternationLines,
  roundFigures,
  variantEnv,
  variantName,
  type AlternateRound,
  type RoundMode,
} from './alternation';
import {
  apiWithWorkerProcesses,
  benchOptions,
  cpuPerTransfer,
  cpuSnapshot,
  setupBenchTemporal,
  type ApiWithWorkers,
} from './topology';
import { benchBuild, describeBuild } from './launch';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const FIND_RATE = process.argv.includes('--find-rate') || process.env.BENCH_RATE === 'find';
const PROBE_RATES = (process.env.BENCH_RATES ?? '2,5,10,15,20,25,30,40').split(',').map(Number);
if (PROBE_RATES.some((r) => !(r > 0)))
  throw new Error(`BENCH_RATES: "${process.env.BENCH_RATES}" is not a list of positive rates`);
const RATE = FIND_RATE ? Math.max(...PROBE_RATES) : Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** The baseline's p99 the rate search must stay under, and the ratio the orchestrator must keep to it. */
const BASELINE_P99_MS = 250;
const TARGET_RATIO = 1.2;
const LOST_AFTER_MS = Number(process.env.BENCH_LOST_AFTER_MS ?? 120_000);
const ms = (n: number) => `${Math.round(n)} ms`;

async function main() {
  // The runtime's logger must be installed before the test environment creates the runtime.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const options = benchOptions();
  const temporal = await setupBenchTemporal(options);
  process.stdout.write(`bench:incoming: workers ${describeBuild(benchBuild())}\n`);
  const g = groupSeed();
  const sb = await startSandbox(g.seed);
  const gatewayKey = createDidKeyRecord();
  const orchestratorTables = createPool(testEnv().databaseUrl, 'orchestrator');
  const masterKey = randomBytes(32).toString('base64');
  let orch: ApiWithWorkers | undefined;
  try {
    const token = await sb.token(g.gatewayUser);
    const sandbox = (method: string, path: string, body: unknown) =>
      fetch(`${sb.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Json>);
    await sandbox('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    /** The API here and `workers` worker processes, the gateway's notification webhook pointing at that API. */
    const startOrch = async (workers: number, workerEnv?: Record<string, string>) => {
      const o = await apiWithWorkerProcesses({
        network: sb.networkConfig(g.gatewayUser),
        group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
        agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
        transfers: {},
        incoming: { pollInterval: '30s' },
        workers,
        masterKey,
        workerEnv,
      });
      const hook = await sandbox('POST', '/webhook', {
        vaspDID: g.gateway,
        url: `${o.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
      });
      o.webhooks.notification[g.gateway] = hook.secret as string;
      return o;
    };

    /** The warm-ups' transfers go to addresses of their own: the network learns an address once it was confirmed, and
     * would route a second transfer to it by itself. */
    const warmUpCount = FIND_RATE ? Math.round(PROBE_RATES[0]! * SECONDS) : 0;
    const measured = RATE * SECONDS;
    const total = measured + warmUpCount;
    const address = (scenario: number, i: number) => `0x${scenario}${String(i).padStart(39, '0')}`;
    // Baseline addresses live in the network's address book; the orchestrator's only in the group's registry.
    const baselineCsv = Array.from({ length: total }, (_, i) => ({
      vaspDID: g.subA,
      asset: 'ETH',
      address: address(1, i),
      customerRef: `b${i}`,
    }));
    for (let i = 0; i < total; i += 500) {
      await Promise.all(baselineCsv.slice(i, i + 500).map((e) => sandbox('POST', '/address/registerCustomer', e)));
    }
    const registerScenario = async (o: ApiWithWorkers, scenario: number) => {
      for (let i = 0; i < total; i += 1000) {
        const batch = Array.from({ length: Math.min(1000, total - i) }, (_, k) => ({
          vaspDID: g.subB,
          asset: 'ETH',
          address: address(scenario, i + k),
          customerRef: `o${scenario}-${i + k}`,
        }));
        const r = await fetch(`${o.apiUrl}/v1/addresses`, {
          method: 'PUT',
          headers: o.headers('operator', { 'content-type': 'application/json' }),
          body: JSON.stringify({ addresses: batch }),
        });
        if (!r.ok) throw new Error(`registry upsert failed: ${r.status} ${await r.text()}`);
      }
    };

    const send = async (destination: string) =>
      (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination, amount: '1000' })).id;

    /**
     * Sends `rate × SECONDS` transfers (at most `total`, the addresses registered) at `rate` per second and waits until
     * the network has confirmed every one (or gives up).
     */
    const run = async (scenario: number, rate = RATE, offset = 0) => {
      const parts = { temporal, workerPids: orch?.workerPids ?? [] };
      const cpu0 = await cpuSnapshot(parts);
      const ids: Promise<string>[] = [];
      const started = Date.now();
      const n = Math.min(total - offset, Math.round(rate * SECONDS));
      for (let i = 0; i < n; i++) {
        const due = started + (i * 1000) / rate;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        ids.push(send(address(scenario, offset + i)));
      }
      const sent = await Promise.all(ids);
      const sendSeconds = (Date.now() - started) / 1000;
      const deadline = Date.now() + LOST_AFTER_MS;
      let confirmedCount = 0;
      for (;;) {
        const { rows } = await sb.pool.query<{ n: string }>(
          `select count(*) n from transactions where id = any($1::uuid[]) and status in ('ACK', 'ACCEPTED', 'DECLINED')`,
          [sent],
        );
        confirmedCount = Number(rows[0]!.n);
        if (confirmedCount === sent.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const confirmed = Date.now();
      const cpu = cpuPerTransfer(cpu0, await cpuSnapshot(parts), sent.length);
      const { rows } = await sb.pool.query<{ id: string; body: { actions: { action: string; createdAt: string }[] } }>(
        'select id, body from transactions where id = any($1::uuid[])',
        [sent],
      );
      const count = (b: { actions: { action: string }[] }, a: string) => b.actions.filter((x) => x.action === a).length;
      const duplicated = rows.filter((r) => count(r.body, 'confirm') > 1 || count(r.body, 'redirect') > 1).length;
      const done = rows.filter((r) => count(r.body, 'confirm') > 0);
      const at = (b: { actions: { action: string; createdAt: string }[] }, a: string) =>
        Date.parse(b.actions.find((x) => x.action === a)!.createdAt);
      const webhooks = new Map(
        (
          await orchestratorTables.query<{ transaction_id: string; first: Date }>(
            'select transaction_id, min(received_at) first from received_webhooks where transaction_id = any($1) group by transaction_id',
            [sent],
          )
        ).rows.map((r) => [r.transaction_id, r.first.getTime()]),
      );
      const endToEnd = done.map((r) => at(r.body, 'confirm') - at(r.body, 'create'));
      const times: TransferTimes[] = done
        .filter((r) => webhooks.has(r.id))
        .map((r) => ({
          id: r.id,
          workflowId: workflowIds.incomingTransfer(r.id),
          received: webhooks.get(r.id)!,
          confirmed: at(r.body, 'confirm'),
        }));
      const fromWebhook = times.map((t) => t.confirmed - t.received);
      return {
        ids: sent,
        sent: sent.length,
        lost: sent.length - confirmedCount,
        duplicated,
        sendSeconds,
        throughput: confirmedCount / ((confirmed - started) / 1000),
        endToEnd,
        fromWebhook,
        times,
        cpu,
      };
    };

    const rss = () => Math.round(process.memoryUsage().rss / 1e6);
    const line = (name: string, xs: number[]) =>
      `${name.padEnd(52)} p50 ${ms(quantile(xs, 0.5)).padStart(8)}   p99 ${ms(quantile(xs, 0.99)).padStart(8)}   max ${ms(Math.max(...xs)).padStart(8)}`;
    orch = await startOrch(options.workerCounts[0]!);
    await registerScenario(orch, 2);
    let rate = RATE;
    let baseline: Awaited<ReturnType<typeof run>> | undefined;
    if (FIND_RATE) {
      process.stdout.write(
        `incoming transfers (${temporal.label}): finding the highest rate of ${PROBE_RATES.join(', ')}/s at which the sandbox's own routing keeps p99 under ${BASELINE_P99_MS} ms (${SECONDS} s each)\n`,
      );
      // The first transfers of a fresh stack pay for JIT, connection pools and caches: not the rate's fault.
      await run(1, PROBE_RATES[0], measured);
      for (const probe of PROBE_RATES) {
        const r = await run(1, probe);
        const p99 = quantile(r.endToEnd, 0.99);
        process.stdout.write(
          `${line(`  baseline at ${probe}/s: create→ACK`, r.endToEnd)}   ${r.throughput.toFixed(1)} transfers/s${r.lost ? `, ${r.lost} not confirmed` : ''}\n`,
        );
        if (p99 >= BASELINE_P99_MS || r.lost) break;
        [rate, baseline] = [probe, r];
      }
      if (!baseline)
        throw new Error(
          `the sandbox's own routing misses p99 < ${BASELINE_P99_MS} ms even at ${PROBE_RATES[0]}/s: add a lower rate to BENCH_RATES`,
        );
      process.stdout.write(
        `rate for the target: ${rate}/s (the highest probed at which the baseline's p99 stays under ${BASELINE_P99_MS} ms)\n`,
      );
    } else {
      process.stdout.write(
        `incoming transfers (${temporal.label}): ${total} per scenario at ${RATE}/s (${SECONDS} s), 2-core machine\n`,
      );
      baseline = await run(1);
    }
    process.stdout.write(
      `${line(`baseline: sandbox auto-routing, create→ACK, ${rate}/s`, baseline.endToEnd)}   ${baseline.throughput.toFixed(1)} transfers/s\n`,
    );
    process.stdout.write(`    ${cpuLine(baseline.cpu, 'transfer')}\n`);
    const checks: string[] = [];
    let firstRatio: number | undefined;
    // What a transfer costs in counts (issue 27): the orchestrator's writes around the first measured run, and after
    // everything is timed, the histories of a sample of its workflows. BENCH_COST=off: none of it.
    const costing = process.env.BENCH_COST !== 'off';
    let costIds: string[] = [];
    let writes: string | undefined;
    for (const [i, workers] of options.workerCounts.entries()) {
      if (i > 0) {
        await orch.close();
        orch = await startOrch(workers);
        await registerScenario(orch, 2 + i);
      }
      if (FIND_RATE) await run(2 + i, PROBE_RATES[0], measured); // the same warm-up as the baseline's
      const before = costing && i === 0 ? await dbWrites(orchestratorTables) : undefined;
      const ours = await run(2 + i, rate);
      if (before) {
        writes = describeWrites(
          `${ours.sent} incoming transfers`,
          writesPer(before, await dbWrites(orchestratorTables), ours.sent),
        );
        costIds = ours.ids;
      }
      const label = `${workers} worker process${workers > 1 ? 'es' : ''}`;
      process.stdout.write(
        `${line(`orchestrator (${label}): webhook received→confirmed`, ours.fromWebhook)}   ${ours.throughput.toFixed(1)} transfers/s\n`,
      );
      process.stdout.write(`${line(`orchestrator (${label}): create→confirmed`, ours.endToEnd)}\n`);
      process.stdout.write(`    ${cpuLine(ours.cpu, 'transfer')}\n`);
      if (process.env.BENCH_TAIL !== 'off') {
        const splits = await slowestSplits(testEnv().temporalAddress, ours.times);
        process.stdout.write(`    where the slowest went (webhook received → confirmed, ms):\n`);
        for (const l of tailLines(splits)) process.stdout.write(`${l}\n`);
      }
      const ratio = quantile(ours.fromWebhook, 0.99) / quantile(baseline.endToEnd, 0.99);
      firstRatio ??= ratio;
      process.stdout.write(
        `    ratio p99 orchestrator (webhook→confirmed) / baseline at ${rate}/s: ${ratio.toFixed(2)}×; lost ${ours.lost}, duplicated ${ours.duplicated}\n`,
      );
      if (ours.lost || ours.duplicated) checks.push(`${label}: ${ours.lost} lost, ${ours.duplicated} duplicated`);
      if (FIND_RATE)
        process.stdout.write(
          `    target p99 ≤ ${TARGET_RATIO}× the baseline's at ${rate}/s: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}\n`,
        );
      else
        process.stdout.write(
          `    target p99 < 250 ms at ${rate}/s: ${quantile(ours.fromWebhook, 0.99) < 250 ? 'met' : 'NOT met'}\n`,
        );
    }
    // BENCH_VARIANT (worker settings, `NAME=value …`): the orchestrator's scenario again in rounds alternating a worker
    // without them and one with them (bench/alternation.ts), each round on addresses of its own and a fresh worker.
    const variant = variantEnv();
    if (Object.keys(variant).length) {
      const { pairs } = alternation('VARIANT', measured);
      const first = 2 + options.workerCounts.length;
      // An address is `0x`, the scenario's digit and 39 more: scenarios 1 to 9.
      if (first + 2 * pairs > 9)
        throw new Error(`BENCH_VARIANT_PAIRS: at most ${Math.floor((9 - first) / 2)} here (one digit per scenario)`);
      const name = variantName(variant);
      const rounds: AlternateRound[] = [];
      for (let k = 0; k <= 2 * pairs; k++) {
        const mode: RoundMode = k % 2 ? 'on' : 'off';
        await orch.close();
        orch = await startOrch(1, mode === 'on' ? variant : undefined);
        await registerScenario(orch, first + k);
        const r = await run(first + k, rate);
        if (r.lost || r.duplicated) checks.push(`${name} ${mode}: ${r.lost} lost, ${r.duplicated} duplicated`);
        rounds.push({ mode, cpu: r.cpu, rate: r.throughput, p50: quantile(r.fromWebhook, 0.5) });
        process.stdout.write(
          `  ${name} round ${k + 1} (${mode}): ${roundFigures(rounds.at(-1)!)} (p50: webhook received → confirmed)\n`,
        );
      }
      for (const l of alternationLines(name, rounds)) process.stdout.write(`${l}\n`);
    }
    process.stdout.write(
      checks.length ? `CHECK FAILED: ${checks.join('; ')}\n` : 'check: 0 lost, 0 duplicated in every run\n',
    );
    process.stdout.write(
      `bench process RSS ${rss()} MB; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
    );
    let floorIds: string[] = [];
    if (process.env.BENCH_FLOOR !== 'off') {
      const floor = await runFloor({
        address: testEnv().temporalAddress,
        keyring: testEnv().keyring,
        rate,
        seconds: SECONDS,
        eager: false,
        serverPid: temporal.temporalPid(),
      });
      process.stdout.write(`temporal floor, same server and rate: ${describeFloor(floor)}\n`);
      if (costing) floorIds = floor.workflowIds;
    }
    if (costing) {
      const address = testEnv().temporalAddress;
      const rows = [
        await sampledCost(address, 'incomingTransfer', costIds.map(workflowIds.incomingTransfer), testEnv().keyring),
        ...(floorIds.length
          ? [await sampledCost(address, 'floorWorkflow (empty, one local activity)', floorIds, testEnv().keyring)]
          : []),
      ];
      process.stdout.write(
        `\n${costBlock('cost per workflow, sampled after the timed runs', [], [...costLines(rows), ...(writes ? [`database writes, ${writes}`] : [])])}\n`,
      );
    }
    if (checks.length) process.exitCode = 1;
  } finally {
    await orch?.close();
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
