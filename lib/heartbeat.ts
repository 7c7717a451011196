/**
 * Progress reports of long steps. The activity adapter (activities/context.ts) passes in a function that heartbeats
 * the running activity; a step called outside an activity (benchmarks, tests) gets none, and reports to nobody.
 */
export type Heartbeat = (details?: Record<string, unknown>) => void;

/** Heartbeats every 10 s while `fn` runs: one long SQL statement (a diff over millions of rows) is not a dead worker. */
export async function withHeartbeat<T>(
  heartbeat: Heartbeat | undefined,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (!heartbeat) return fn();
  const timer = setInterval(() => heartbeat({ [what]: 'in progress' }), 10_000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
