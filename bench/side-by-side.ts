/**
 * Two orchestrators side by side, one with a setting and one without, sent every other transfer of one round: how
 * bench:transfers' path `observability-paired` measures observability's cost (issue 24). Rounds that alternate in time
 * (bench/alternation.ts) compare processes that ran minutes apart, and on this machine rounds minutes apart differ by
 * more than the 3 % being decided; two worker processes in the same round get the same load at the same moments, from
 * the same Temporal server and database, so what the machine does to one it does to the other. Each round starts both
 * afresh, and which of the two starts first alternates.
 */
import { alternation, targetVerdict } from './alternation';
import { byKind, type ThreadCpu } from './cpu';
import { median } from './stats';

/**
 * The rounds' shape from `BENCH_<prefix>_ROUNDS` (default 4), `_TRANSFERS`, `_RATE` (a fixed start rate per second)
 * and `_IDLE_SECONDS` (default 30: both idle that long before each round's transfers).
 */
export function sideBySideRounds(
  prefix: string,
  transfers: number,
): { rounds: number; transfers: number; rate?: number; idleSeconds: number } {
  // `_TRANSFERS` and `_RATE` read as the alternation reads them.
  const { pairs: _pairs, ...shape } = alternation(prefix, transfers);
  return {
    ...shape,
    rounds: Number(process.env[`BENCH_${prefix}_ROUNDS`] ?? 4),
    idleSeconds: Number(process.env[`BENCH_${prefix}_IDLE_SECONDS`] ?? 30),
  };
}

export interface SideBySideRound {
  /** The worker's CPU ms per transfer it carried, with the setting and without. */
  withIt: number;
  without: number;
  /** Which of the two orchestrators started first in this round. */
  first: 'with' | 'without';
  /** CPU ms per second of each worker while idle, before the round's transfers: what it spends whatever the traffic. */
  idle: { withIt: number; without: number };
  /** Each worker's CPU ms per transfer it carried, by kind of thread (bench/cpu.ts threadCpu), where /proc tells. */
  threads?: { withIt: ThreadCpu; without: ThreadCpu };
}

/** What bench:transfers read of one side-by-side round. */
export interface SideBySideReading {
  /**
   * CPU ms per transfer of the whole round (both orchestrators' transfers), by process: `worker 1` is the worker with
   * the setting, `worker 2` the one without.
   */
  cpu: Record<string, number | undefined>;
  /** The transfers each worker carried. */
  carried: { withIt: number; without: number };
  /** Each worker's CPU ms a second while idle before the round, the one with the setting first. */
  idle: number[];
  first: 'with' | 'without';
  /** Each worker's CPU seconds by kind of thread over the round, the one with the setting first. */
  threads?: (ThreadCpu | undefined)[];
}

/** One round's figures, per transfer each worker carried. */
export function sideBySideRound({ cpu, carried, idle, first, threads }: SideBySideReading): SideBySideRound {
  const all = carried.withIt + carried.without;
  const own = (worker: string, count: number) => ((cpu[worker] ?? NaN) * all) / count;
  const [withIt, without] = threads ?? [];
  return {
    withIt: own('worker 1', carried.withIt),
    without: own('worker 2', carried.without),
    first,
    idle: { withIt: idle[0] ?? NaN, without: idle[1] ?? NaN },
    ...(withIt &&
      without && {
        threads: { withIt: perTransfer(withIt, carried.withIt), without: perTransfer(without, carried.without) },
      }),
  };
}

/** CPU seconds by kind of thread as ms per transfer. */
const perTransfer = (seconds: ThreadCpu, transfers: number) => byKind((k) => (seconds[k] * 1000) / transfers);

const THREAD_KINDS: [keyof ThreadCpu, string][] = [
  ['main', 'main thread'],
  ['helpers', "V8's and libuv's threads"],
  ['workflow', 'workflow thread'],
  ['temporalCore', "the SDK's Rust threads"],
];

/** `main thread 20.1 → 21.0 (+0.9), …`: the worker without, then with, in ms per transfer. */
const describeThreads = (without: ThreadCpu, withIt: ThreadCpu) =>
  THREAD_KINDS.map(
    ([k, name]) =>
      `${name} ${without[k].toFixed(2)} → ${withIt[k].toFixed(2)} (${withIt[k] >= without[k] ? '+' : ''}${(withIt[k] - without[k]).toFixed(2)})`,
  ).join(', ');

export const describeSideBySideRound = (r: SideBySideRound) =>
  `worker with it ${r.withIt.toFixed(2)}, without ${r.without.toFixed(2)} ms CPU per transfer it carried: ` +
  `${(r.withIt / r.without).toFixed(3)}× (${r.first === 'with' ? 'the one with it' : 'the one without'} started first); ` +
  `idle before: with it ${r.idle.withIt.toFixed(1)}, without ${r.idle.without.toFixed(1)} ms CPU a second` +
  (r.threads ? `; by thread, without → with: ${describeThreads(r.threads.without, r.threads.withIt)}` : '');

/** Each round's ratio of the two workers' CPU per transfer, and their median against `target`. */
export function sideBySideLines(name: string, rounds: SideBySideRound[], target: number): string[] {
  const ratios = rounds.map((r) => r.withIt / r.without);
  const ratio = median(ratios);
  const mean = (of: (r: SideBySideRound) => number) => rounds.reduce((s, r) => s + of(r), 0) / rounds.length;
  return [
    `${name}, CPU per transfer of the worker process: without ${mean((r) => r.without).toFixed(2)}, with ` +
      `${mean((r) => r.withIt).toFixed(2)} (means); each round's ratio ${ratios.map((x) => x.toFixed(3)).join(', ')}; ` +
      `median ratio ${ratio.toFixed(3)}× ${targetVerdict(ratio, target)}`,
    `${name}, CPU a second of the worker process while idle: without ${mean((r) => r.idle.without).toFixed(1)}, with ` +
      `${mean((r) => r.idle.withIt).toFixed(1)} ms (means)`,
    ...(rounds.every((r) => r.threads)
      ? [
          `${name}, CPU per transfer by thread, without → with (means, ms): ${describeThreads(
            meanThreads(rounds.map((r) => r.threads!.without)),
            meanThreads(rounds.map((r) => r.threads!.withIt)),
          )}`,
        ]
      : []),
    `${name}: the API, the Temporal server, the sandbox and PostgreSQL serve both orchestrators and are not divided`,
  ];
}

const meanThreads = (all: ThreadCpu[]) => byKind((k) => all.reduce((s, t) => s + t[k], 0) / all.length);
