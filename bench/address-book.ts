/**
 * `npm run bench:address-book` (issue #4): one subsidiary's registry of 1,000,000 addresses reconciled into the sandbox
 * (first full sync), then a 1 % delta (0.5 % of the entries deleted, as many new ones added), each through the real
 * workflow on a real Temporal dev server, PostgreSQL and the sandbox over HTTP.
 *
 * - The worker runs in a child process (bench/address-book-worker.ts): only the address-book activities, the workflow
 *   bundle the tests use. Its peak RSS is what the figures call "worker peak RSS": the maximum of RSS samples taken
 *   every 50 ms in that process during each run (and `resourceUsage().maxRSS` over its whole life).
 * - Baseline, same run, same database: `COPY (the same rows, the same CSV columns) TO STDOUT` through psql into a
 *   byte counter.
 * - "Upload" is what the network side costs: the span from the first chunk's POST to the end of the sandbox's
 *   processing of the last file (read from the sandbox's own upload records). The orchestrator's own work is the
 *   rest of the run.
 *
 * Knobs: BENCH_ROWS (default 1000000), BENCH_DELTA_PERCENT (default 1), BENCH_WORKER_FLAGS (Node flags for the worker
 * process; default `--max-old-space-size=96 --max-semi-space-size=4`, '' for Node's defaults), ADDRESS_BOOK_* settings (see address-book/config.ts; the defaults apply otherwise, with a 100 ms poll
 * interval).
 */
import { fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createPool } from '../db/pool';
import type { ReconcileReport } from '../address-book/types';
import { createDataConverter } from '../lib/temporal/data-converter';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { groupSeed, startSandbox, testEnv } from '../test/harness/platform';
import { addressBookReconcile } from '../workflows';
import type { FromWorker, ToWorker } from './address-book-worker';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const DELTA_PERCENT = Number(process.env.BENCH_DELTA_PERCENT ?? 1);
/**
 * Node flags of the worker process. V8's defaults let the heap grow far past what the worker keeps alive (garbage is
 * collected late); a capped old space and small young generation keep RSS near the working set. BENCH_WORKER_FLAGS=''
 * measures Node's defaults.
 */
const WORKER_FLAGS = process.env.BENCH_WORKER_FLAGS ?? '--max-old-space-size=96 --max-semi-space-size=4';
const log = (line: string) => process.stdout.write(`${line}\n`);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const memory = (m: ReturnType<typeof process.memoryUsage>) =>
  `RSS ${mb(m.rss)} (V8 heap ${mb(m.heapUsed)} used of ${mb(m.heapTotal)}, external ${mb(m.external)})`;

/** COPY … TO STDOUT of the rows a full sync uploads, in the upload's CSV form, through psql into a byte counter. */
async function copyBaseline(databaseUrl: string, vaspDid: string): Promise<{ ms: number; bytes: number }> {
  const sql = `COPY (select asset, network_address as address, customer_ref as "customerRef" from orchestrator.address_registry
    where vasp_did = '${vaspDid}' order by network_address) TO STDOUT WITH (FORMAT csv, HEADER)`;
  const started = performance.now();
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    const psql = spawn('psql', [databaseUrl, '-X', '-q', '-c', sql], { stdio: ['ignore', 'pipe', 'inherit'] });
    psql.stdout.on('data', (b: Buffer) => (bytes += b.length));
    psql.on('error', reject);
    psql.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited with ${code}`))));
  });
  return { ms: performance.now() - started, bytes };
}

async function main(): Promise<void> {
  log(
    `address-book bench: ${ROWS.toLocaleString('en')} addresses, ${DELTA_PERCENT} % delta; ${cpus().length} cores, ${mb(totalmem())}; ` +
      `worker flags: ${WORKER_FLAGS || '(Node defaults)'}`,
  );
  await globalSetup();
  const group = groupSeed();
  const vasp = group.subA;
  const sandbox = await startSandbox(group.seed);
  const env = testEnv();
  const network = sandbox.networkConfig(group.gatewayUser);
  const taskQueue = `bench-${randomUUID()}`;
  const child = fork(join(__dirname, 'address-book-worker.ts'), [], {
    execArgv: [...process.execArgv, ...WORKER_FLAGS.split(/\s+/).filter(Boolean)],
    env: { ...process.env, BENCH_NETWORK: JSON.stringify(network), BENCH_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const fromWorker = (type: FromWorker['type']) =>
    new Promise<FromWorker>((resolve, reject) => {
      const onMessage = (m: FromWorker) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        resolve(m);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`the worker exited (${code})`)));
    });
  const peakOfRun = async () => {
    const reply = fromWorker('peak');
    child.send({ type: 'mark' } satisfies ToWorker);
    return (await reply) as Extract<FromWorker, { type: 'peak' }>;
  };
  const ready = (await fromWorker('ready')) as Extract<FromWorker, { type: 'ready' }>;
  log(`worker process started: ${memory(ready.memory)} before any run`);

  const orch = createPool(env.databaseUrl, 'orchestrator');
  const connection = await Connection.connect({ address: env.temporalAddress });
  const client = new Client({ connection, dataConverter: createDataConverter(env.keyring) });
  const run = async (label: string): Promise<ReconcileReport> => {
    await peakOfRun();
    const started = performance.now();
    const report = await client.workflow.execute(addressBookReconcile, {
      taskQueue,
      workflowId: `bench-${label}-${randomUUID()}`,
      args: [{ vaspDid: vasp, trigger: 'bench' }],
    });
    const elapsed = performance.now() - started;
    const peak = await peakOfRun();
    if (report.status !== 'succeeded') throw new Error(`${label}: ${report.status} ${report.error ?? ''}`);
    const { rows: u } = await sandbox.pool.query<{ first: Date; last: Date; n: string }>(
      `select min(received_at) as first, max(finished_at) as last, count(*) as n from address_uploads
        where vasp_did = $1 and received_at >= now() - make_interval(secs => $2)`,
      [vasp, elapsed / 1000 + 1],
    );
    const uploadMs = Number(u[0]!.n) > 0 ? u[0]!.last.getTime() - u[0]!.first.getTime() : 0;
    log(
      `\n${label}: ${s(elapsed)} (workflow result), worker peak ${memory(peak.atPeak)}; process maxRSS so far ${mb(peak.maxRss)}`,
    );
    log(
      `  added ${report.added}, updated ${report.updated}, removed ${report.removed}, rejected ${report.rejected}; ` +
        `${report.method}, ${report.chunks} chunks, ${u[0]!.n} uploads; verified by ${report.verifiedBy}`,
    );
    log(
      `  phases: ${Object.entries(report.phases)
        .map(([k, v]) => `${k} ${s(v)}`)
        .join(', ')}`,
    );
    // Where the orchestrator's share goes: everything before the first file arrives and after the last is processed.
    const {
      rows: [t],
    } = await orch.query<{ started_at: Date; finished_at: Date; first_chunk: Date | null }>(
      `select r.started_at, r.finished_at, min(c.started_at) as first_chunk from address_book_runs r
         left join address_book_chunks c using (run_id) where r.run_id = $1 group by r.run_id`,
      [report.runId],
    );
    const {
      rows: [f],
    } = await sandbox.pool.query<{ first: Date | null; last: Date | null }>(
      'select min(received_at) as first, max(finished_at) as last from address_uploads where vasp_did = $1 and received_at >= $2',
      [vasp, t!.started_at],
    );
    const at = (d: Date | null | undefined) => (d ? s(d.getTime() - t!.started_at.getTime()) : '-');
    log(
      `  timeline from the run's start: first chunk's POST ${at(t!.first_chunk)}, first file received ${at(f!.first)}, ` +
        `last file processed ${at(f!.last)}, run finished ${at(t!.finished_at)}`,
    );
    if (uploadMs)
      log(
        `  upload (first POST → sandbox done with the last file): ${s(uploadMs)}; orchestrator's own share ${s(elapsed - uploadMs)}`,
      );
    return Object.assign(report, { elapsedMs: elapsed, uploadMs, peakRss: peak.rss });
  };

  try {
    // The registry: ROWS ETH addresses of one subsidiary.
    let t = performance.now();
    await orch.query(
      `insert into address_registry (asset, address, tag, vasp_did, customer_ref)
       select 'ETH', '0x' || lpad(to_hex(i), 40, '0'), '', $1, 'customer-' || i from generate_series(1, $2::int) i`,
      [vasp, ROWS],
    );
    await orch.query('analyze address_registry');
    log(`registry seeded in ${s(performance.now() - t)}`);

    const copy = await copyBaseline(env.databaseUrl, vasp);
    log(`COPY … TO STDOUT baseline: ${s(copy.ms)} for ${mb(copy.bytes)} of CSV`);

    const full = (await run('full sync')) as ReconcileReport & { elapsedMs: number; uploadMs: number; peakRss: number };
    const own = full.elapsedMs - full.uploadMs;
    log(
      `  ratio to COPY: total ${(full.elapsedMs / copy.ms).toFixed(1)}×, orchestrator's share ${(own / copy.ms).toFixed(1)}× ` +
        `(target: total ≤ 3 × COPY + upload, i.e. ${s(3 * copy.ms + full.uploadMs)})`,
    );

    // The delta: every (200 / percent)-th entry deleted, as many new entries added.
    const changes = Math.round((ROWS * DELTA_PERCENT) / 100);
    t = performance.now();
    const step = Math.max(1, Math.floor(ROWS / (changes / 2)));
    await orch.query(
      `delete from address_registry where vasp_did = $1 and customer_ref in (
      select 'customer-' || i from generate_series(1, $2::int, $3::int) i)`,
      [vasp, ROWS, step],
    );
    await orch.query(
      `insert into address_registry (asset, address, tag, vasp_did, customer_ref)
       select 'ETH', '0x' || lpad(to_hex(i), 40, '0'), '', $1, 'customer-' || i from generate_series($2::int + 1, $2::int + $3::int) i`,
      [vasp, ROWS, Math.round(changes / 2)],
    );
    log(`\ndelta of ${changes.toLocaleString('en')} changes prepared in ${s(performance.now() - t)}`);
    const delta = (await run(`${DELTA_PERCENT} % delta`)) as ReconcileReport & { elapsedMs: number };
    log(`  target: under 5 s → ${delta.elapsedMs < 5000 ? 'met' : 'NOT met'}`);
    const final = await child.send({ type: 'stop' } satisfies ToWorker);
    void final;
  } finally {
    child.kill('SIGTERM');
    await connection.close();
    await orch.end();
    await sandbox.close();
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
    process.exit(1);
  },
);
