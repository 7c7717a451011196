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
 * BENCH_FIELDS=small|40 (the personal data: a typical 9-field record, or the 40-field fixture), `--cluster` or
 * BENCH_TEMPORAL=cluster (the Temporal server on PostgreSQL instead of the dev server), `--workers=1,2` or
 * BENCH_WORKERS=1,2 (the Temporal path once per worker-process count; default 1), BENCH_PATHS (any of temporal,
 * all-in-one,direct: `all-in-one` runs the API and a worker in this process on one connection with eager start, as
 * workers/all-in-one.ts does), BENCH_FLOOR=off (else the empty-workflow floor is measured at the end on the same server,
 * BENCH_FLOOR_RATE per second, default 20), BENCH_RATE (the paths' transfers started at that fixed rate). Every run
 * checks that each transfer ended ACCEPTED exactly once (lost: no callback within BENCH_LOST_AFTER_MS, default 120 s;
 * duplicated: a second callback, or a second transaction at the network under the same transactionRef), and prints
 * each process's CPU.
 *
 * Cost in counts (issue 27; BENCH_COST=off skips it): the orchestrator schema's rows written and the database's commits
 * around the first measured run of each path, and after everything is timed, the histories of up to 50 sampled
 * workflows of the Temporal path and of the floor (workflow tasks, activities, local activities, events, payload bytes:
 * bench/cost.ts).
 *
 * Observability's cost (issue 24, path `observability`, on by default): the Temporal path again, one worker process,
 * with metrics and tracing off (every /metrics listener `off`, no OTEL_EXPORTER_OTLP_ENDPOINT) and on (every
 * listener on, scraped as the repo's Prometheus does: every BENCH_SCRAPE_MS, by default the scrape_interval of
 * ops/prometheus/prometheus.yml, over kept connections; traces of the API and the worker
 * exported to a collector sink in a process of its own), rounds alternating off, on, off, …, off
 * (BENCH_OBSERVABILITY_PAIRS on-rounds, default 2) of BENCH_OBSERVABILITY_TRANSFERS each (default BENCH_TRANSFERS).
 * Each on-round is compared with the mean of the off-rounds beside it, so drift in the machine's load weighs on both
 * sides; the ratio is the median of those. Target: CPU per transfer at most 3 % above the same run's without them.
 * BENCH_OBSERVABILITY_RATE starts each round's transfers at that fixed rate instead of as fast as they finish.
 *
 * The same cost side by side (path `observability-paired`, bench/side-by-side.ts): each round runs two orchestrators
 * at once, one with metrics and tracing on and one with them off, each its own worker process and task queue, and
 * sends them every other transfer; the worker with them against the worker without, in CPU per transfer each carried.
 * BENCH_OBSERVABILITY_PAIRED_ROUNDS (default 4), _TRANSFERS (per round, both together) and _RATE as above; before
 * each round's transfers both idle for BENCH_OBSERVABILITY_PAIRED_IDLE_SECONDS (default 30), to show what each spends
 * a second whatever the traffic.
 * OTEL_TRACES_SAMPLER(_ARG) apply to the traced API in this process and to its workers alike (config/index.ts).
 *
 * A worker setting's cost (path `variant`, issue 27's tuning): the same alternation, the on-rounds' worker started with
 * BENCH_VARIANT's settings (`NAME=value …`, e.g. `WORKER_WORKFLOW_TASK_POLLERS=2`), BENCH_VARIANT_PAIRS,
 * BENCH_VARIANT_TRANSFERS and BENCH_VARIANT_RATE as above; the ratios of the worker's, the Temporal server's and all
 * processes' CPU per transfer, the throughput and the p50.
 *
 * At the end, issue 27's targets from this run's figures (costTargetLines): the orchestration's CPU per transfer and
 * the latency it adds, each against the empty-workflow floor.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, get as httpGet } from 'node:http';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { AddressInfo } from 'node:net';
import { NetworkClient } from '../network/client';
import { runTransferDirect } from '../outgoing/transaction';
import type { NetworkTransaction } from '../network/transactions';
import type { OutgoingTransferBody } from '../outgoing/request';
import { createDidKeyRecord } from '../lib/crypto';
import { webhookHeaders } from '../lib/webhook-signature';
import { createPool } from '../db/pool';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { groupSeed, startOrchestrator, startSandbox, testEnv } from '../test/harness/platform';
import { quantile } from './stats';
import { parseDuration } from '../lib/config-values';
import {
  alternation,
  alternationLines,
  roundFigures,
  variantEnv,
  variantName,
  type Alternation,
  type AlternateRound,
  type RoundMode,
} from './alternation';
import { costTargetLines, type TargetPaths } from './cost-targets';
import {
  describeSideBySideRound,
  sideBySideLines,
  sideBySideRound,
  sideBySideRounds,
  type SideBySideRound,
} from './side-by-side';
import { startTracing, type Tracing } from '../lib/tracing';
import { loadTracesSampler } from '../config';
import { cpuSeconds, cpuTotal, threadCpu, threadCpuBetween } from './cpu';
import { describeFloor, runFloor, type FloorResult } from './floor';
import { costBlock, costLines, dbWrites, describeWrites, sampledCost, writesPer, type CostSummary } from './cost';
import {
  apiWithWorkerProcesses,
  benchOptions,
  cpuPerTransfer,
  cpuSnapshot,
  setupBenchTemporal,
  spawnSandbox,
  spawnCollectorSink,
  type ApiWithWorkers,
  type BenchObservability,
  type BenchTemporal,
} from './topology';
import { benchBuild, describeBuild } from './launch';

const N = Number(process.env.BENCH_TRANSFERS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
/**
 * BENCH_RATE: the measured runs of the temporal, all-in-one and direct paths started at this many transfers per second
 * (at most BENCH_CONCURRENCY in flight) instead of as fast as they finish, so that what each process spends per second
 * (pollers, the sandbox's loops) weighs alike on every path's CPU per transfer; unset: as fast as they finish.
 */
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const FIELDS = process.env.BENCH_FIELDS ?? 'small';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

const log = (line: string) => process.stdout.write(`${line}\n`);

/** A typical transfer's personal data: names, an address line, a national id, account numbers (9 strings). */
const SMALL = {
  originator: {
    originatorPersons: [
      {
        naturalPerson: {
          name: [
            {
              nameIdentifier: [
                { primaryIdentifier: 'Baggins', secondaryIdentifier: 'Frodo', nameIdentifierType: 'LEGL' },
              ],
            },
          ],
          geographicAddress: [{ addressType: 'HOME', townName: 'Hobbiton', country: 'NZ' }],
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
                { primaryIdentifier: 'Gamgee', secondaryIdentifier: 'Samwise', nameIdentifierType: 'LEGL' },
              ],
            },
          ],
        },
      },
    ],
    accountNumber: ['0x1c70c03b0c6d0e1a04cd2ad09c7d1b5c8b0b7e11'],
  },
};

const LOST_AFTER_MS = Number(process.env.BENCH_LOST_AFTER_MS ?? 120_000);
/** The empty-workflow floor's rate, printed after the paths (BENCH_FLOOR=off: none). */
const FLOOR_RATE = Number(process.env.BENCH_FLOOR_RATE ?? 20);

const SCRAPE_MS = process.env.BENCH_SCRAPE_MS ? Number(process.env.BENCH_SCRAPE_MS) : shippedScrapeIntervalMs();
/** What the on-rounds turn on (BENCH_OBSERVABILITY_PARTS): metrics, tracing or both (default). */
const OBSERVABILITY_PARTS = (process.env.BENCH_OBSERVABILITY_PARTS ?? 'metrics,tracing').split(',');
const OBSERVABILITY_TARGET = 1.03;
const OBSERVABILITY = alternation('OBSERVABILITY', N);
const SIDE_BY_SIDE = sideBySideRounds('OBSERVABILITY_PAIRED', N);
const VARIANT = alternation('VARIANT', N);
const VARIANT_ENV = variantEnv();

/** The scrape interval of the Prometheus the repo ships (docker-compose's `observability` profile). */
function shippedScrapeIntervalMs(): number {
  const config = parseYaml(readFileSync(join(__dirname, '..', 'ops', 'prometheus', 'prometheus.yml'), 'utf8')) as {
    global?: { scrape_interval?: string };
  };
  const ms = parseDuration(config.global?.scrape_interval ?? '');
  if (!ms) throw new Error('ops/prometheus/prometheus.yml: global.scrape_interval is not a duration');
  return ms;
}

/**
 * Reads every /metrics in `urls` each `ms` as Prometheus does: one kept connection per target, reused from scrape to
 * scrape (the listeners keep it, lib/metrics/server.ts); returns the stop.
 */
function scrapeEvery(urls: string[], ms: number): () => void {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const scrape = (url: string) =>
    new Promise<void>((resolve) => {
      httpGet(url, { agent }, (res) =>
        res
          .resume()
          .on('end', resolve)
          .on('error', () => resolve()),
      ).on('error', () => resolve());
    });
  const scraper = setInterval(() => void Promise.all(urls.map(scrape)), ms);
  return () => {
    clearInterval(scraper);
    agent.destroy();
  };
}

/** CPU ms per second each process spends over `seconds` of idling. */
async function idleCpu(pids: (number | undefined)[], seconds: number): Promise<number[]> {
  const before = pids.map(cpuSeconds);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return pids.map((pid, i) => (((cpuSeconds(pid) ?? NaN) - (before[i] ?? NaN)) * 1000) / seconds);
}

async function main() {
  const options = benchOptions();
  const temporal = await setupBenchTemporal(options);
  // The cluster's server runs detached: stop it and drop the run's databases whatever happens.
  try {
    await measure(temporal);
  } finally {
    await temporal.teardown();
  }
}

async function measure(temporal: BenchTemporal) {
  const started = Date.now();
  const options = benchOptions();
  const pii =
    FIELDS === '40'
      ? (JSON.parse(
          readFileSync(`${__dirname}/../test/fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8'),
        ) as typeof SMALL)
      : SMALL;

  const group = groupSeed();
  // The sandbox (the network) runs in its own process, as it does under `npm start`, so the orchestrator's figures are
  // not the network's CPU; BENCH_SANDBOX=inline keeps it in this process.
  const sandbox =
    process.env.BENCH_SANDBOX === 'inline' ? await startSandbox(group.seed) : await spawnSandbox(group.seed);
  const sandboxTables = createPool(testEnv().databaseUrl, 'sandbox');
  const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
  await external.api
    .post('tf/vasps/update', {
      json: {
        did: group.external,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: createDidKeyRecord().did }] }],
      },
    })
    .json();

  // Completion signals: the orchestrator's callback (Temporal path) and the counterparty driver (direct path).
  const waiters = new Map<string, (at: number) => void>();
  const accepted = new Map<string, number>();
  const done = (id: string) => {
    accepted.set(id, (accepted.get(id) ?? 0) + 1);
    waiters.get(id)?.(performance.now());
  };
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
    pollIntervalMs: 10 * 60_000,
    answerDeadlineMs: 60 * 60_000,
  };
  const webhooks = { notification: { [group.subA]: SECRET } };
  const masterKey = randomBytes(32).toString('base64');
  // The workers run in their own processes (`npm run worker`), as deployed, unless BENCH_WORKER=inline.
  const startOrch = async (
    workers: number,
    observability?: BenchObservability,
    workerEnv?: Record<string, string>,
    apiTracing?: { shared: Tracing | undefined },
  ): Promise<ApiWithWorkers> =>
    process.env.BENCH_WORKER === 'inline'
      ? {
          ...(await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
            group: group2,
            agentKeys,
            transfers: transferSettings,
            webhooks,
            keystoreMasterKey: masterKey,
          })),
          workerPids: [],
        }
      : apiWithWorkerProcesses({
          network: sandbox.networkConfig(group.gatewayUser),
          group: group2,
          agentKeys,
          transfers: transferSettings,
          webhooks,
          workers,
          masterKey,
          observability,
          workerEnv,
          apiTracing,
        });
  let orch = await startOrch(options.workerCounts[0]!);
  /** The orchestrator each transfer was sent to, when two run side by side: its webhook goes to the same API. */
  const owners = new Map<string, ApiWithWorkers>();

  // The counterparty: reads its inbox, confirms and accepts, and the network tells the originator by webhook.
  let driving = true;
  let directMode = false;
  const handled = new Set<string>();
  const answer = async (tx: NetworkTransaction) => {
    await external.api.post('tx/confirm', { searchParams: { id: tx.id } }).json();
    const acceptedTx = await external.api.post('tx/accept', { searchParams: { id: tx.id } }).json<NetworkTransaction>();
    const raw = JSON.stringify({
      message: 'notification.transactionUpdated',
      payload: { transaction: { ...acceptedTx, pii: undefined, ivms101: undefined } },
      version: '1',
    });
    const api = owners.get(acceptedTx.transactionRef ?? '') ?? orch;
    const r = await fetch(`${api.apiUrl}/webhooks/notification/${encodeURIComponent(group.subA)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...webhookHeaders(SECRET, `msg_${randomUUID()}`, raw) },
      body: raw,
    });
    if (r.status !== 200) throw new Error(`webhook answered ${r.status}`);
    if (directMode) done(acceptedTx.transactionRef!);
  };
  const driver = (async () => {
    while (driving) {
      const { transactions } = await external.api
        .get('tx/list', {
          searchParams: { vaspDID: group.external, status: 'SENT', resultsPerPage: 100, sort: 'createdAt:ASC' },
        })
        .json<{ transactions: NetworkTransaction[] }>()
        .catch((e: unknown) => {
          log(`counterparty: tx/list failed: ${(e as Error).message}`);
          return { transactions: [] as NetworkTransaction[] };
        });
      const fresh = transactions.filter((t) => !handled.has(t.id));
      fresh.forEach((t) => handled.add(t.id));
      await Promise.all(
        fresh.map((t) =>
          answer(t).catch((e: unknown) => log(`counterparty failed on ${t.id}: ${(e as Error).message}`)),
        ),
      );
      if (fresh.length === 0) await new Promise((r) => setTimeout(r, 5));
    }
  })();

  const body = (): OutgoingTransferBody => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
    originator: pii.originator,
    beneficiary: pii.beneficiary,
  });

  /** `perSecond`: transfers started at that fixed rate (still at most CONCURRENCY in flight), else as fast as they finish. */
  async function run(
    label: string,
    count: number,
    one: (id: string) => Promise<void>,
    perSecond?: number,
    workerPids = orch.workerPids,
  ) {
    const latencies: number[] = [];
    const ids: string[] = [];
    let next = 0;
    let failures = 0;
    let lost = 0;
    const parts = { temporal, workerPids, sandboxPid: (sandbox as { pid?: number }).pid };
    const cpu0 = await cpuSnapshot(parts);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
        while (next < count) {
          const due = perSecond ? t0 + (next * 1000) / perSecond : 0;
          next++;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
          const id = `bench-${randomUUID()}`;
          ids.push(id);
          let timer: NodeJS.Timeout | undefined;
          const finished = new Promise<number | undefined>((resolve) => {
            waiters.set(id, resolve);
            timer = setTimeout(() => resolve(undefined), LOST_AFTER_MS);
          });
          const start = performance.now();
          try {
            await one(id);
            const at = await finished;
            if (at === undefined) lost++;
            else latencies.push(at - start);
          } catch (e) {
            failures++;
            if (failures <= 3) log(`${label}: ${(e as Error).message}`);
          } finally {
            clearTimeout(timer);
            waiters.delete(id);
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuPerTransfer(cpu0, await cpuSnapshot(parts), latencies.length);
    // A late second callback would still arrive: give the stragglers a moment before counting duplicates.
    await new Promise((r) => setTimeout(r, 1000));
    const twice = ids.filter((id) => (accepted.get(id) ?? 0) > 1).length;
    const { rows } = await sandboxTables.query<{ n: string }>(
      'select count(*) n from (select transaction_ref from transactions where transaction_ref = any($1) group by 1 having count(*) > 1) d',
      [ids],
    );
    return {
      ids,
      cpu,
      label,
      count: latencies.length,
      failures,
      lost,
      duplicated: twice + Number(rows[0]!.n),
      seconds,
      rate: latencies.length / seconds,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
    };
  }

  const postTransfer = async (to: ApiWithWorkers, id: string) => {
    const r = await fetch(`${to.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: to.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify(body()),
    });
    if (r.status !== 202) throw new Error(`POST /v1/transfers answered ${r.status}: ${await r.text()}`);
  };
  const viaApi = (id: string) => postTransfer(orch, id);
  const direct = async (id: string) => {
    await runTransferDirect(orch.transfers, id, {
      body: { ...body(), transactionRef: id },
      source: 'api',
      hybrid: false,
    });
  };

  log(
    `bench:transfers — ${temporal.label}; ${N} transfers per path, ${CONCURRENCY} in flight${RATE ? ` at most, started at ${RATE}/s` : ''}, ${FIELDS === '40' ? '40' : '9'}-field IVMS101, end-to-end mode; sandbox and workers ${describeBuild(benchBuild())}`,
  );
  log(`load average at the start: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  const results = [];
  const paths = (process.env.BENCH_PATHS ?? 'temporal,observability,direct').split(',');
  // What a transfer costs in counts (issue 27): the database's writes around the first measured run of a path, and
  // after everything is timed, the histories of a sample of its workflows. BENCH_COST=off: none of it.
  const costing = process.env.BENCH_COST !== 'off';
  const orchestratorTables = costing ? createPool(testEnv().databaseUrl, 'orchestrator') : undefined;
  const writeLines: string[] = [];
  /** `measure` with the orchestrator schema's writes read before and after it (its timing is not affected). */
  const withWrites = async <R extends { count: number; label: string }>(
    measure: () => Promise<R>,
    counted = true,
  ): Promise<R> => {
    if (!orchestratorTables || !counted) return measure();
    const before = await dbWrites(orchestratorTables);
    const r = await measure();
    const after = await dbWrites(orchestratorTables);
    writeLines.push(describeWrites(r.label, writesPer(before, after, r.count)));
    return r;
  };
  let costIds: string[] = [];
  const targetPaths: TargetPaths = {};
  for (const [i, workers] of options.workerCounts.entries()) {
    if (i > 0) {
      await orch.close();
      orch = await startOrch(workers);
    }
    // Warm-up: JIT, connection pools, directory cache, workflow bundle.
    await run('warm-up (temporal)', Math.min(100, N), viaApi);
    if (paths.includes('temporal')) {
      const r = await withWrites(
        () => run(`through the API and Temporal, ${workers} worker process${workers > 1 ? 'es' : ''}`, N, viaApi, RATE),
        i === 0,
      );
      if (i === 0) {
        costIds = r.ids;
        targetPaths.temporal = r;
      }
      results.push(r);
    }
  }
  /**
   * Rounds alternating off, on, off, …, off (`pairs` on-rounds), each on an orchestrator with one worker process
   * started afresh for it, warmed up first; `during` runs beside a round and returns its stop.
   */
  async function alternate(
    name: string,
    alternation: Alternation,
    start: (mode: RoundMode) => Promise<ApiWithWorkers>,
    during?: (mode: RoundMode) => (() => void) | undefined,
  ): Promise<AlternateRound[]> {
    const rounds: AlternateRound[] = [];
    const modes = ['off' as const, ...Array.from({ length: alternation.pairs }, () => ['on', 'off'] as const).flat()];
    for (const [round, mode] of modes.entries()) {
      await orch.close();
      orch = await start(mode);
      const stop = during?.(mode);
      try {
        await run(`warm-up (${name} ${mode})`, Math.min(50, alternation.transfers), viaApi);
        const r = await run(
          `${name} ${mode}, round ${round + 1}, 1 worker process`,
          alternation.transfers,
          viaApi,
          alternation.rate,
        );
        results.push(r);
        rounds.push({ mode, cpu: r.cpu, rate: r.rate, p50: r.p50 });
        log(`  ${name} round ${round + 1} (${mode}): ${roundFigures(rounds.at(-1)!)}`);
      } finally {
        stop?.();
      }
    }
    await orch.close();
    orch = await startOrch(options.workerCounts[0]!);
    return rounds;
  }
  const alternations: string[] = [];
  if (paths.includes('observability') && process.env.BENCH_WORKER !== 'inline') {
    const sink = await spawnCollectorSink();
    const name = OBSERVABILITY_PARTS.join(' and ');
    let urls: string[] = [];
    const rounds = await alternate(
      name,
      OBSERVABILITY,
      async (mode) => {
        const on = (part: string) => mode === 'on' && OBSERVABILITY_PARTS.includes(part);
        const started = await startOrch(1, {
          metrics: on('metrics'),
          ...(on('tracing') && { otlpEndpoint: sink.url }),
        });
        urls = started.metricsUrls ?? [];
        return started;
      },
      (mode) => {
        if (mode === 'off') return undefined;
        log(`  ${urls.length} /metrics scraped every ${SCRAPE_MS} ms`);
        return scrapeEvery(urls, SCRAPE_MS);
      },
    );
    alternations.push(...alternationLines(name, rounds, OBSERVABILITY_TARGET));
    alternations.push(`spans the collector sink received: ${await sink.spans()}`);
    await sink.close();
  }
  if (paths.includes('observability-paired') && process.env.BENCH_WORKER !== 'inline') {
    const sink = await spawnCollectorSink();
    const name = `${OBSERVABILITY_PARTS.join(' and ')}, side by side`;
    const on = (part: string) => OBSERVABILITY_PARTS.includes(part);
    // One tracing for this process: the traced orchestrator's API uses it, the other's API is not traced.
    const tracing = on('tracing')
      ? startTracing({ otlpEndpoint: sink.url, process: 'api', sampler: loadTracesSampler() })
      : undefined;
    const startOn = () =>
      startOrch(1, { metrics: on('metrics'), ...(on('tracing') && { otlpEndpoint: sink.url }) }, undefined, {
        shared: tracing,
      });
    const startOff = () => startOrch(1, { metrics: false }, undefined, { shared: undefined });
    const rounds: SideBySideRound[] = [];
    await orch.close();
    for (let round = 1; round <= SIDE_BY_SIDE.rounds; round++) {
      // Both afresh each round; which one starts first alternates.
      const first = round % 2 === 1 ? 'with' : 'without';
      let withIt: ApiWithWorkers, without: ApiWithWorkers;
      if (first === 'with') {
        withIt = await startOn();
        without = await startOff();
      } else {
        without = await startOff();
        withIt = await startOn();
      }
      const stopScraping = scrapeEvery(withIt.metricsUrls ?? [], SCRAPE_MS);
      try {
        // Every other transfer to each: the same load, at the same moments, on both.
        const carried = { withIt: 0, without: 0 };
        const split = (id: string) => {
          const to = (carried.withIt + carried.without) % 2 === 0 ? withIt : without;
          carried[to === withIt ? 'withIt' : 'without']++;
          owners.set(id, to);
          return postTransfer(to, id);
        };
        const pids = [withIt.workerPids[0], without.workerPids[0]];
        await run(`warm-up (${name}, round ${round})`, Math.min(100, SIDE_BY_SIDE.transfers), split, undefined, pids);
        Object.assign(carried, { withIt: 0, without: 0 });
        // What each spends a second with nothing to do (pollers, timers; with them on: the scrapes, the exporter).
        const idle = await idleCpu(pids, SIDE_BY_SIDE.idleSeconds);
        const threads0 = pids.map(threadCpu);
        const r = await run(
          `${name}, round ${round}: worker 1 with them, worker 2 without`,
          SIDE_BY_SIDE.transfers,
          split,
          SIDE_BY_SIDE.rate,
          pids,
        );
        results.push(r);
        const threads = pids.map((pid, i) => threadCpuBetween(threads0[i], threadCpu(pid)));
        rounds.push(sideBySideRound({ cpu: r.cpu, carried, idle, first, threads }));
        log(`  ${name}, round ${round}: ${describeSideBySideRound(rounds.at(-1)!)}`);
      } finally {
        stopScraping();
        owners.clear();
        await without.close();
        await withIt.close();
      }
    }
    alternations.push(...sideBySideLines(name, rounds, OBSERVABILITY_TARGET));
    alternations.push(`spans the collector sink received: ${await sink.spans()}`);
    await tracing?.shutdown();
    await sink.close();
    orch = await startOrch(options.workerCounts[0]!);
  }
  if (paths.includes('variant') && process.env.BENCH_WORKER !== 'inline') {
    const name = variantName(VARIANT_ENV);
    const rounds = await alternate(name, VARIANT, (mode) =>
      mode === 'on' ? startOrch(1, undefined, VARIANT_ENV) : startOrch(1),
    );
    alternations.push(...alternationLines(name, rounds));
  }
  if (paths.includes('all-in-one')) {
    // What workers/all-in-one.ts runs: the API and a worker in this process on one NativeConnection, eager starts.
    await orch.close();
    orch = {
      ...(await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
        group: group2,
        agentKeys,
        transfers: transferSettings,
        webhooks,
        keystoreMasterKey: masterKey,
        eagerStart: true,
      })),
      workerPids: [],
    };
    await run('warm-up (all-in-one)', Math.min(100, N), viaApi);
    const r = await withWrites(() =>
      run('through the API and Temporal, all-in-one process (API + worker, eager start)', N, viaApi, RATE),
    );
    if (!costIds.length) costIds = r.ids;
    results.push(r);
  }
  directMode = true;
  await run('warm-up (direct)', Math.min(100, N), direct);
  if (paths.includes('direct')) {
    const r = await withWrites(() => run('direct, without Temporal', N, direct, RATE));
    targetPaths.direct = r;
    results.push(r);
  }

  driving = false;
  await driver;
  log('');
  const ms = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(1));
  const columns = [...new Set(results.flatMap((r) => Object.keys(r.cpu)))];
  log(
    `| path | transfers | failures | lost | duplicated | seconds | transfers/s | p50 ms | p99 ms | ${columns.map((c) => `CPU ms/transfer: ${c}`).join(' | ')} | total |`,
  );
  log(`|---|${'---:|'.repeat(8 + columns.length + 1)}`);
  for (const r of results) {
    const total = cpuTotal(r.cpu);
    log(
      `| ${r.label} | ${r.count} | ${r.failures} | ${r.lost} | ${r.duplicated} | ${r.seconds.toFixed(1)} | ${r.rate.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} ` +
        `| ${columns.map((c) => ms(r.cpu[c])).join(' | ')} | ${total.toFixed(1)} |`,
    );
  }
  const bad = results.filter((r) => r.lost || r.duplicated || r.failures);
  log(
    bad.length
      ? `CHECK FAILED: ${bad.map((r) => `${r.label}: ${r.failures} failed, ${r.lost} lost, ${r.duplicated} duplicated`).join('; ')}`
      : 'check: 0 failed, 0 lost, 0 duplicated in every run',
  );
  for (const line of alternations) log(line);
  log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  // The empty workflow's cost on the same server in the same run: what the orchestration's share is compared with.
  const floorCosts: (CostSummary | string)[] = [];
  const floors: FloorResult[] = [];
  if (process.env.BENCH_FLOOR !== 'off') {
    for (const eager of [false, true]) {
      const floor = await runFloor({
        address: testEnv().temporalAddress,
        keyring: testEnv().keyring,
        rate: FLOOR_RATE,
        seconds: 10,
        eager,
        serverPid: temporal.temporalPid(),
        // On the cluster the server's persistence is PostgreSQL, which the paths' PostgreSQL column counts too.
        ...(options.cluster ? { serverPostgresPids: () => temporal.postgresPids() } : {}),
      });
      log(`temporal floor, same server: ${describeFloor(floor)}`);
      floors.push(floor);
      if (costing)
        floorCosts.push(
          await sampledCost(
            testEnv().temporalAddress,
            `floorWorkflow (empty, one local activity${eager ? ', eager start' : ''})`,
            floor.workflowIds,
            testEnv().keyring,
          ),
        );
    }
  }
  for (const line of costTargetLines(targetPaths, floors, CONCURRENCY)) log(line);
  if (costing) {
    log('');
    const rows = costIds.length
      ? [
          await sampledCost(
            testEnv().temporalAddress,
            'outgoingTransfer',
            costIds.map(workflowIds.outgoingTransfer),
            testEnv().keyring,
          ),
        ]
      : [];
    log(
      costBlock(
        'cost per workflow, sampled after the timed runs',
        [],
        [...costLines([...rows, ...floorCosts]), ...writeLines.map((l) => `database writes, ${l}`)],
      ),
    );
  }
  await orchestratorTables?.end();
  log(`\n(total run ${((Date.now() - started) / 1000).toFixed(0)} s)`);

  await orch.close();
  await sandbox.close();
  await sandboxTables.end();
  await new Promise((r) => callbacks.close(r));
  if (bad.length) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    process.stderr.write(`bench:transfers failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
