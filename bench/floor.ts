/**
 * The Temporal floor: workflows that do nothing but one local activity (bench/floor-workflows.ts), started at a fixed
 * rate through the project's data converter and awaited to their result. What any Temporal-based flow costs on this
 * machine before the project's own work; bench/temporal-floor.ts prints it alone, bench/incoming.ts beside its figures.
 */
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import type { CodecKeyring } from '../lib/temporal/codec';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { FloorActivities } from './floor-workflows';
import { cpuOfEach, cpuSeconds, cpuUsedBetween } from './cpu';
import { quantile } from './stats';

export interface FloorResult {
  sent: number;
  rate: number;
  eager: boolean;
  completedPerSecond: number;
  p50: number;
  p99: number;
  /**
   * CPU milliseconds per workflow: the Temporal server (with its PostgreSQL backends when `serverPostgresPids` is
   * given: the cluster's persistence), and this process (client and worker).
   */
  serverCpuMs: number;
  /** Of serverCpuMs, the server's PostgreSQL backends (0 without `serverPostgresPids`). */
  persistenceCpuMs: number;
  selfCpuMs: number;
  /**
   * Of serverCpuMs, persistenceCpuMs and selfCpuMs: what the same processes spend idle (read over `idleSeconds` with
   * nothing in flight, before the measure) in one workflow's share of the measured time. A difference of two runs, as
   * bench:transfers' orchestration, has this cancelled out; the floor, an absolute total, has not.
   */
  idle: { serverCpuMs: number; persistenceCpuMs: number; selfCpuMs: number };
  /** The measured workflows' ids (bench/cost.ts reads their histories). */
  workflowIds: string[];
}

/** The newest Temporal dev server on the machine: the one the benchmark's setup started. */
function temporalServerPid(): number {
  return Math.max(
    ...execFileSync('pgrep', ['-f', 'server start-dev'], { encoding: 'utf8' }).trim().split('\n').map(Number),
  );
}

export async function runFloor(opts: {
  address: string;
  keyring: CodecKeyring;
  rate: number;
  seconds: number;
  eager: boolean;
  serverPid?: number;
  /** The PostgreSQL backends serving the server's databases (the cluster's persistence), counted with the server. */
  serverPostgresPids?: () => Promise<number[]>;
  /** Workflows run before the measure (default 50). */
  warmUp?: number;
  /** How long the idle reading is (default 5 s). */
  idleSeconds?: number;
}): Promise<FloorResult> {
  const taskQueue = `floor-${Date.now()}-${opts.eager ? 'eager' : 'plain'}`;
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./floor-workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  const activities: FloorActivities = { floorStep: async (id) => id };
  const native = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowBundle: bundle,
    activities,
    dataConverter: createDataConverter(opts.keyring),
  });
  const running = worker.run();
  // Eager start: the client shares the worker's native connection, and the first workflow task comes back with the
  // start call instead of through the task queue.
  const connection = opts.eager ? undefined : await Connection.connect({ address: opts.address });
  const client = new Client({
    connection: connection ?? (native as never),
    dataConverter: createDataConverter(opts.keyring),
  });
  try {
    const one = (i: number) =>
      client.workflow.execute('floorWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}-${i}`,
        args: [String(i)],
        ...(opts.eager ? { requestEagerStart: true } : {}),
      });
    for (let i = 0; i < (opts.warmUp ?? 50); i++) await one(-1 - i); // warm-up
    const server = opts.serverPid ?? temporalServerPid();
    const total = Math.round(opts.rate * opts.seconds);
    const latencies: number[] = [];
    const persistence = async () => cpuOfEach((await opts.serverPostgresPids?.()) ?? []);
    const idle = await idleCpuPerSecond(server, persistence, opts.idleSeconds ?? 5);
    const cpu0 = { server: cpuSeconds(server), self: process.cpuUsage(), persistence: await persistence() };
    const started = Date.now();
    const all: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1000) / opts.rate - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t = performance.now();
      all.push(one(i).then(() => void latencies.push(performance.now() - t)));
    }
    await Promise.all(all);
    const seconds = (Date.now() - started) / 1000;
    const self = process.cpuUsage(cpu0.self);
    const persistenceCpuMs = (cpuUsedBetween(cpu0.persistence, await persistence()) * 1000) / total;
    return {
      sent: total,
      rate: opts.rate,
      eager: opts.eager,
      completedPerSecond: total / seconds,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      serverCpuMs: (((cpuSeconds(server) ?? NaN) - (cpu0.server ?? NaN)) * 1000) / total + persistenceCpuMs,
      persistenceCpuMs,
      selfCpuMs: (self.user + self.system) / 1000 / total,
      idle: {
        serverCpuMs: (idle.server * seconds * 1000) / total,
        persistenceCpuMs: (idle.persistence * seconds * 1000) / total,
        selfCpuMs: (idle.self * seconds * 1000) / total,
      },
      workflowIds: Array.from({ length: total }, (_, i) => `${taskQueue}-${i}`),
    };
  } finally {
    worker.shutdown();
    await running;
    await connection?.close();
    await native.close();
  }
}

/** CPU seconds per second of the server (with its PostgreSQL backends), of those backends, and of this process. */
async function idleCpuPerSecond(
  server: number,
  persistence: () => Promise<Map<number, number>>,
  seconds: number,
): Promise<{ server: number; persistence: number; self: number }> {
  await new Promise((r) => setTimeout(r, 1000)); // what the warm-up left behind settles first
  const before = { server: cpuSeconds(server) ?? NaN, persistence: await persistence(), self: process.cpuUsage() };
  const started = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  const self = process.cpuUsage(before.self);
  const persistenceSeconds = cpuUsedBetween(before.persistence, await persistence());
  return {
    server: ((cpuSeconds(server) ?? NaN) - before.server + persistenceSeconds) / elapsed,
    persistence: persistenceSeconds / elapsed,
    self: (self.user + self.system) / 1e6 / elapsed,
  };
}

export const describeFloor = (f: FloorResult) =>
  `${f.sent} empty workflows at ${f.rate}/s${f.eager ? ' (eager start)' : ''}: ${f.completedPerSecond.toFixed(1)} completed/s, ` +
  `start→result p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms; CPU per workflow: Temporal server ${f.serverCpuMs.toFixed(1)} ms${f.persistenceCpuMs ? ` (its PostgreSQL ${f.persistenceCpuMs.toFixed(1)})` : ''}, ` +
  `client + worker ${f.selfCpuMs.toFixed(1)} ms; of these, the same processes idle: server ${f.idle.serverCpuMs.toFixed(1)} ms, client + worker ${f.idle.selfCpuMs.toFixed(1)} ms`;
