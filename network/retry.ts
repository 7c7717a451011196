import { RateLimitedError, UpstreamUnavailableError } from '../lib/errors';

/**
 * How an idempotent call to the network rides out transient failures (5xx, timeouts, dropped connections, 429s) before
 * its caller hears of them. Long steps that make thousands of calls (the address book's listing, removals and
 * registrations) need this: with one call in five failing, an attempt that ends at its first failure makes about four
 * calls, and restarting the whole activity for each failure never gets through a large book.
 */
export interface TransientRetryPolicy {
  /** How long one call keeps trying; its last error is thrown after that (Temporal's retry takes over). */
  maxElapsedMs: number;
  /** First wait between tries, doubled each time up to `maxDelayMs`, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Called before each wait: an activity heartbeats here, so a call riding out an outage is not a dead worker. */
  onRetry?: (info: { what: string; attempt: number; waitMs: number; error: UpstreamUnavailableError }) => void;
}

export const DEFAULT_TRANSIENT_RETRY: TransientRetryPolicy = {
  maxElapsedMs: 5 * 60_000,
  initialDelayMs: 500,
  maxDelayMs: 20_000,
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether `e` is a failure that trying the same call again later can cure. */
export function isTransient(e: unknown): e is UpstreamUnavailableError {
  return e instanceof UpstreamUnavailableError;
}

/**
 * Runs `call` until it succeeds, fails for good, or `maxElapsedMs` has passed. A 429 (or the group's budget) is waited
 * out for the block it names, never less; other transient failures back off exponentially with full jitter.
 */
export async function retryTransient<T>(
  what: string,
  call: () => Promise<T>,
  policy: TransientRetryPolicy,
  now: () => number = Date.now,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<T> {
  const deadline = now() + policy.maxElapsedMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!isTransient(e)) throw e;
      const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
      const jittered = backoff / 2 + Math.random() * (backoff / 2);
      const waitMs = Math.ceil(e instanceof RateLimitedError ? Math.max(e.retryAfterMs, jittered) : jittered);
      if (now() + waitMs > deadline) throw e;
      policy.onRetry?.({ what, attempt, waitMs, error: e });
      await wait(waitMs);
    }
  }
}
