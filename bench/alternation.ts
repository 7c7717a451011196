/**
 * Rounds alternating off, on, off, …, off, each on-round set against the mean of the off-rounds beside it, so that drift
 * in the machine's load weighs on both sides: how bench:transfers measures observability's cost and a worker setting's
 * (`variant`), and bench:incoming a worker setting's.
 */
import { median } from './stats';
import { cpuTotal } from './cpu';

/** The alternated rounds' shape from `BENCH_<prefix>_PAIRS`, `_TRANSFERS` and `_RATE` (a fixed start rate per second). */
export function alternation(prefix: string, transfers: number): Alternation {
  const rate = process.env[`BENCH_${prefix}_RATE`];
  return {
    pairs: Number(process.env[`BENCH_${prefix}_PAIRS`] ?? 2),
    transfers: Number(process.env[`BENCH_${prefix}_TRANSFERS`] ?? transfers),
    ...(rate && { rate: Number(rate) }),
  };
}
/** A ratio's verdict against its target, as the benchmarks print it. */
export const targetVerdict = (ratio: number, target: number) =>
  `(target ≤ ${target}×: ${ratio <= target ? 'met' : 'NOT met'})`;

/** BENCH_VARIANT: the on-rounds' worker settings, `NAME=value` pairs separated by spaces (WORKER_*, for instance). */
export const variantEnv = (): Record<string, string> =>
  Object.fromEntries(
    (process.env.BENCH_VARIANT ?? '')
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

/** How the rounds with BENCH_VARIANT's settings are named in the output. */
export const variantName = (env: Record<string, string>) =>
  `worker with ${Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;

export type RoundMode = 'off' | 'on';
export interface Alternation {
  pairs: number;
  transfers: number;
  rate?: number;
}
export interface AlternateRound {
  mode: RoundMode;
  cpu: Record<string, number | undefined>;
  rate: number;
  /** Absent where the bench times no single transfer (bench:policy only waits for the whole round). */
  p50?: number;
}
export const roundWorker = (r: AlternateRound) => r.cpu['worker 1'] ?? NaN;
const roundTemporal = (r: AlternateRound) => r.cpu.temporal ?? NaN;
const roundTotal = (r: AlternateRound) => cpuTotal(r.cpu);
export const roundFigures = (r: AlternateRound) =>
  `worker ${roundWorker(r).toFixed(2)}, Temporal ${roundTemporal(r).toFixed(2)}, all processes ${roundTotal(r).toFixed(2)} ms/transfer; ${r.rate.toFixed(1)} transfers/s${r.p50 === undefined ? '' : `, p50 ${r.p50.toFixed(0)} ms`}`;

/** The mean of one figure over the rounds of one mode. */
export function modeMean(rounds: AlternateRound[], mode: RoundMode, of: (r: AlternateRound) => number): number {
  const xs = rounds.filter((r) => r.mode === mode).map(of);
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * Each on-round against the mean of the off-rounds beside it, so that drift in the machine's load weighs on both
 * sides; the median of those ratios per figure. `target`: the CPU ratio the on-rounds may reach.
 */
export function alternationLines(name: string, rounds: AlternateRound[], target?: number): string[] {
  const pairs = (rounds.length - 1) / 2;
  const figures: [string, (r: AlternateRound) => number][] = [
    ['CPU per transfer of the worker process', roundWorker],
    ['CPU per transfer of the Temporal server', roundTemporal],
    ['CPU per transfer of all processes', roundTotal],
    ['transfers/s', (r) => r.rate],
  ];
  if (rounds.every((r) => r.p50 !== undefined)) figures.push(['p50', (r) => r.p50!]);
  return figures.map(([what, of]) => {
    const mean = (mode: RoundMode) => modeMean(rounds, mode, of);
    const ratios = Array.from(
      { length: pairs },
      (_, i) => of(rounds[2 * i + 1]!) / ((of(rounds[2 * i]!) + of(rounds[2 * i + 2]!)) / 2),
    );
    const ratio = median(ratios);
    const verdict =
      target !== undefined && what.startsWith('CPU') && !what.includes('Temporal')
        ? ` ${targetVerdict(ratio, target)}`
        : '';
    return `${name}, ${what}: off ${mean('off').toFixed(2)}, on ${mean('on').toFixed(2)} (means); each on-round / its neighbours' mean ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ratio ${ratio.toFixed(3)}×${verdict}`;
  });
}
