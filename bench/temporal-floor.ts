/**
 * npm run bench:temporal-floor — the ceiling this machine puts on any Temporal-based flow, measured on the same
 * stack the project's benchmarks use (the Temporal CLI dev server, the project's encrypting data converter, one
 * worker): workflows that do nothing but one local activity, started at BENCH_RATE per second for BENCH_SECONDS,
 * each awaited to its result by the client. Prints throughput, start→result latency (p50/p99) and the CPU the
 * Temporal server and this process (client + worker) spent per workflow.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createDataConverter } from '../lib/temporal/data-converter';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { randomSecret, testEnv } from '../test/harness/platform';
import type { FloorActivities } from './floor-workflows';

const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function temporalServerPid(): number {
  const out = execFileSync('pgrep', ['-f', 'server start-dev'], { encoding: 'utf8' }).trim().split('\n').map(Number);
  // The newest dev server is the one this run started.
  return Math.max(...out);
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await globalSetup();
  const env = testEnv();
  const taskQueue = `floor-${randomSecret()}`;
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflows'), logger: new DefaultLogger('ERROR') });
  const activities: FloorActivities = { floorStep: async (id) => id };
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.temporalAddress }), taskQueue, workflowBundle: bundle, activities,
    dataConverter: createDataConverter(env.keyring),
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address: env.temporalAddress }), dataConverter: createDataConverter(env.keyring) });
  const server = temporalServerPid();
  try {
    const one = (i: number) => client.workflow.execute('floorWorkflow', { taskQueue, workflowId: `floor-${taskQueue}-${i}`, args: [String(i)] });
    for (let i = 0; i < 50; i++) await one(-1 - i); // warm-up
    const total = RATE * SECONDS;
    const latencies: number[] = [];
    const cpu0 = { server: cpuSeconds(server), self: process.cpuUsage() };
    const started = Date.now();
    const all: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1000) / RATE - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t = performance.now();
      all.push(one(i).then(() => void latencies.push(performance.now() - t)));
    }
    await Promise.all(all);
    const seconds = (Date.now() - started) / 1000;
    const self = process.cpuUsage(cpu0.self);
    const serverMs = ((cpuSeconds(server) - cpu0.server) * 1000) / total;
    const selfMs = (self.user + self.system) / 1000 / total;
    process.stdout.write(
      `temporal floor (${cpus().length} cores): ${total} workflows sent at ${RATE}/s; ${(total / seconds).toFixed(1)} completed/s; ` +
        `start→result p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms; ` +
        `CPU per workflow: Temporal server ${serverMs.toFixed(1)} ms, client + worker ${selfMs.toFixed(1)} ms\n`,
    );
  } finally {
    worker.shutdown();
    await running;
    await globalTeardown();
  }
}

main().then(() => process.exit(0), (e: Error) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
