/**
 * CPU readings of the benchmarks' processes from /proc: one process, a set of PostgreSQL backends, and the per-transfer
 * figures the benchmarks print.
 */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

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
