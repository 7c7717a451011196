/**
 * CPU readings of the benchmarks' processes from /proc: one process, its threads by kind, a set of PostgreSQL
 * backends, and the per-transfer figures the benchmarks print.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) of a /proc `stat` line, a process's or a thread's; and the name in its parentheses. */
function parseStat(stat: string): { name: string; seconds: number } {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    seconds: (Number(fields[11]) + Number(fields[12])) / 100,
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds;
  } catch {
    return undefined;
  }
}

/** A Node process's CPU seconds so far by kind of thread (Linux /proc/<pid>/task). */
export interface ThreadCpu {
  /** The main thread: the activities, the network client, the exporter, the metrics listener. */
  main: number;
  /** Node's threads started before the Temporal runtime: V8's platform workers (GC, compilers) and libuv's pool. */
  helpers: number;
  /** Node's threads started after it: the worker's workflow thread. */
  workflow: number;
  /** The Temporal SDK's Rust threads (its core: polling, state machines, its Prometheus listener). */
  temporalCore: number;
}

/** The Temporal SDK's Rust threads by name: its tokio runtime, its own runtime thread and workflow-processing thread. */
const TEMPORAL_CORE_THREAD = /^(tokio-runtime|temporal-|workflow-proces)/;

/**
 * A worker process's CPU by kind of thread, undefined where /proc cannot tell. Node names its own threads `node`, the
 * SDK's Rust threads have names of their own, so a `node` thread with an id below the first of those was started
 * before the Temporal runtime (V8 and libuv start theirs with the process), and one above it after (the workflow
 * thread, started with the Worker). Other names (V8's profiler thread under --cpu-prof) count as helpers.
 */
export function threadCpu(pid: number | undefined): ThreadCpu | undefined {
  if (!pid) return undefined;
  try {
    const threads = readdirSync(`/proc/${pid}/task`).map((tid) => ({
      tid: Number(tid),
      ...parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')),
    }));
    return threadCpuOf(pid, threads);
  } catch {
    return undefined;
  }
}

/** The CPU seconds of a process's threads (id, name, seconds) summed by kind, as threadCpu says. */
export function threadCpuOf(pid: number, threads: { tid: number; name: string; seconds: number }[]): ThreadCpu {
  const firstCore = Math.min(...threads.filter((t) => TEMPORAL_CORE_THREAD.test(t.name)).map((t) => t.tid));
  const cpu: ThreadCpu = { main: 0, helpers: 0, workflow: 0, temporalCore: 0 };
  for (const t of threads) {
    const kind =
      t.tid === pid
        ? 'main'
        : TEMPORAL_CORE_THREAD.test(t.name)
          ? 'temporalCore'
          : t.name !== 'node' || t.tid < firstCore
            ? 'helpers'
            : 'workflow';
    cpu[kind] += t.seconds;
  }
  return cpu;
}

/** A ThreadCpu of what `of` gives for each kind of thread. */
export const byKind = (of: (kind: keyof ThreadCpu) => number): ThreadCpu => ({
  main: of('main'),
  helpers: of('helpers'),
  workflow: of('workflow'),
  temporalCore: of('temporalCore'),
});

/**
 * CPU seconds by kind of thread between two readings of threadCpu, undefined when either is missing (threads that
 * ended in between are missed).
 */
export const threadCpuBetween = (before: ThreadCpu | undefined, after: ThreadCpu | undefined) =>
  before && after ? byKind((k) => after[k] - before[k]) : undefined;

/** CPU seconds used so far by each of a set of processes (e.g. PostgreSQL backends), by pid. */
export const cpuOfEach = (pids: number[]): Map<number, number> =>
  new Map(pids.map((pid) => [pid, cpuSeconds(pid) ?? 0]));

/**
 * CPU seconds a set of processes used between two readings of cpuOfEach. Backends are kept by pools: one that started
 * in between counts from zero, one that ended in between is missed.
 */
export function cpuUsedBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, a] of after) seconds += a - (before.get(pid) ?? 0);
  return seconds;
}

/** The CPU per transfer of every process together (`without` one of them, e.g. PostgreSQL). */
export const cpuTotal = (cpu: Record<string, number | undefined>, without?: string) =>
  Object.entries(cpu).reduce((sum, [k, v]) => (k === without ? sum : sum + (v ?? 0)), 0);

/** One line of CPU ms per `unit` (transfer, deposit) by process, and their total. */
export const cpuLine = (cpu: Record<string, number | undefined>, unit: string) =>
  `CPU ms/${unit}: ${Object.entries(cpu)
    .map(([k, v]) => `${k} ${v === undefined ? '–' : v.toFixed(1)}`)
    .join(', ')}, total ${cpuTotal(cpu).toFixed(1)}`;
