/** Issue 27's targets for outgoing transfers, worked out from one bench:transfers run's figures. */
import { cpuTotal } from './cpu';
import type { FloorResult } from './floor';

/** The two runs the targets compare: the Temporal path (its first worker count) and the direct path. */
export interface TargetPaths {
  temporal?: { p50: number; cpu: Record<string, number | undefined> };
  direct?: { p50: number; cpu: Record<string, number | undefined> };
}

/**
 * Issue 27's two targets for outgoing transfers, from this run's figures. Orchestration CPU: all processes' CPU per
 * transfer through the API and Temporal less the direct path's (the same engine work without API, workflow, signal or
 * callback), against the plain-start floor's CPU per empty workflow (Temporal server + client and worker, less what
 * they spend idle: the difference of the two paths has that cancelled out); target ≤ 1.5×. Latency: what the Temporal
 * path adds to the direct path's p50, against the floor's start → result p50; target ≤ 2×, meant for one transfer
 * alone (BENCH_CONCURRENCY=1, with a slow floor such as BENCH_FLOOR_RATE=2).
 */
export function costTargetLines(
  { temporal: temporalPath, direct: directPath }: TargetPaths,
  floors: FloorResult[],
  concurrency: number,
): string[] {
  const floor = floors.find((f) => !f.eager);
  if (!temporalPath || !directPath || !floor) return [];
  const idle = floor.idle.serverCpuMs + floor.idle.selfCpuMs;
  const floorCpu = floor.serverCpuMs + floor.selfCpuMs - idle;
  const floorPersistence = floor.persistenceCpuMs - floor.idle.persistenceCpuMs;
  const verdict = (ratio: number, target: number) =>
    `${ratio.toFixed(2)}× (target ≤ ${target}×: ${ratio <= target ? 'met' : 'NOT met'})`;
  const orchestration = cpuTotal(temporalPath.cpu) - cpuTotal(directPath.cpu);
  const withoutDb = cpuTotal(temporalPath.cpu, 'PostgreSQL') - cpuTotal(directPath.cpu, 'PostgreSQL');
  const added = temporalPath.p50 - directPath.p50;
  return [
    '',
    `issue 27, orchestration CPU per outgoing transfer: ${orchestration.toFixed(1)} ms (Temporal path ${cpuTotal(temporalPath.cpu).toFixed(1)} − direct ${cpuTotal(directPath.cpu).toFixed(1)}), ` +
      `${withoutDb.toFixed(1)} ms without PostgreSQL; the empty workflow's ${floorCpu.toFixed(1)} ms (server ${floor.serverCpuMs.toFixed(1)} + client and worker ${floor.selfCpuMs.toFixed(1)} − idle ${idle.toFixed(1)}): ` +
      `${verdict(orchestration / floorCpu, 1.5)}; without PostgreSQL ${(withoutDb / (floorCpu - floorPersistence)).toFixed(2)}×`,
    `issue 27, latency the orchestration adds (${concurrency} in flight): p50 ${temporalPath.p50.toFixed(0)} − ${directPath.p50.toFixed(0)} = ${added.toFixed(0)} ms; ` +
      `the empty workflow's start → result p50 ${floor.p50.toFixed(0)} ms at ${floor.rate}/s: ${verdict(added / floor.p50, 2)}` +
      (concurrency === 1 ? '' : ' (the target is for one transfer alone: BENCH_CONCURRENCY=1)'),
  ];
}
