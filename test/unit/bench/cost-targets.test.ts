import { costTargetLines } from '../../../bench/cost-targets';
import { cpuOfEach, cpuUsedBetween } from '../../../bench/cpu';
import type { FloorResult } from '../../../bench/floor';

describe("bench/cost-targets: issue 27's targets from a bench:transfers run", () => {
  const floor = (over: Partial<FloorResult> = {}): FloorResult => ({
    sent: 80,
    rate: 8,
    eager: false,
    completedPerSecond: 8,
    p50: 40,
    p99: 90,
    serverCpuMs: 30,
    persistenceCpuMs: 0,
    selfCpuMs: 20,
    idle: { serverCpuMs: 0, persistenceCpuMs: 0, selfCpuMs: 0 },
    workflowIds: [],
    ...over,
  });
  const paths = {
    temporal: { p50: 150, cpu: { API: 40, temporal: 50, worker: 60, PostgreSQL: 30 } },
    direct: { p50: 80, cpu: { API: 40, temporal: 5, worker: 0, PostgreSQL: 25 } },
  };

  it('sets the orchestration (Temporal path less direct) against the plain floor, and the added p50 against its p50', () => {
    const [, cpu, latency] = costTargetLines(paths, [floor({ eager: true, serverCpuMs: 1 }), floor()], 1);
    // 180 − 70 = 110 ms against 30 + 20 = 50 ms; without PostgreSQL 105 ms against the same 50.
    expect(cpu).toContain('orchestration CPU per outgoing transfer: 110.0 ms');
    expect(cpu).toContain('2.20× (target ≤ 1.5×: NOT met); without PostgreSQL 2.10×');
    // 150 − 80 = 70 ms against the floor's 40 ms.
    expect(latency).toContain('p50 150 − 80 = 70 ms');
    expect(latency).toContain('1.75× (target ≤ 2×: met)');
    expect(latency).not.toContain('the target is for one transfer alone');
  });

  it("on the cluster, leaves the floor's own PostgreSQL out of the comparison without PostgreSQL", () => {
    // The floor's 30 ms of server CPU hold 10 ms of its PostgreSQL backends: 105 / (50 − 10).
    const [, cpu] = costTargetLines(paths, [floor({ persistenceCpuMs: 10 })], 16);
    expect(cpu).toContain('without PostgreSQL 2.63×');
  });

  it("takes out of the floor what its processes spend idle, which the paths' difference has cancelled out", () => {
    // 30 + 20 − (4 + 1) = 45 ms: 110 / 45; without PostgreSQL, the floor's PostgreSQL less its idle part: 105 / (45 − 8).
    const idle = { serverCpuMs: 4, persistenceCpuMs: 2, selfCpuMs: 1 };
    const [, cpu] = costTargetLines(paths, [floor({ persistenceCpuMs: 10, idle })], 16);
    expect(cpu).toContain("the empty workflow's 45.0 ms (server 30.0 + client and worker 20.0 − idle 5.0)");
    expect(cpu).toContain('2.44× (target ≤ 1.5×: NOT met); without PostgreSQL 2.84×');
  });

  it('prints nothing without both paths and a plain floor', () => {
    expect(costTargetLines({ temporal: paths.temporal }, [floor()], 1)).toEqual([]);
    expect(costTargetLines(paths, [floor({ eager: true })], 1)).toEqual([]);
  });
});

describe('bench/cpu: CPU of a set of processes between two readings', () => {
  it('counts a process that started in between from zero, and misses one that ended', () => {
    const before = new Map([
      [1, 2.0],
      [2, 5.0],
    ]);
    const after = new Map([
      [1, 2.5],
      [3, 0.25],
    ]);
    expect(cpuUsedBetween(before, after)).toBeCloseTo(0.75);
  });

  it('reads this process from /proc, and nothing for a pid that does not exist', () => {
    const readings = cpuOfEach([process.pid, 2 ** 22 + 7]);
    expect(readings.get(process.pid)).toBeGreaterThan(0);
    expect(readings.get(2 ** 22 + 7)).toBe(0);
  });
});
