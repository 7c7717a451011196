/**
 * The median of `xs`: the middle value, or the mean of the two middle ones for an even count (where quantile's nearest
 * rank would take the lower one, which favours a ratio's verdict); NaN when there is nothing.
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The q-quantile (0 < q ≤ 1) of `xs` by the nearest-rank method; NaN when there is nothing to rank. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
