import { ApplicationFailure } from '@temporalio/common';
import { isAppError, RateLimitedError } from '../lib/errors';

/**
 * Turns the project's typed errors into Temporal failures carrying the same retry decision: a ValidationError stops
 * retries at once, an UpstreamUnavailableError is retried with the activity's backoff, a RateLimitedError no sooner
 * than the network's block ends (a retry inside it would only wait in the budget or meet another 429). Anything else
 * is unexpected and left to Temporal's default (retry).
 */
export function toActivityFailure(e: unknown): unknown {
  if (!isAppError(e)) return e;
  return ApplicationFailure.create({
    type: e.name,
    message: e.message,
    nonRetryable: !e.retryable,
    details: [e.details],
    ...(e instanceof RateLimitedError && e.retryAfterMs > 0 && { nextRetryDelay: e.retryAfterMs }),
  });
}

type AnyFn = (...args: never[]) => Promise<unknown>;

/** Wraps every activity of a factory so its typed errors reach Temporal with their retry decision. */
export function withFailureMapping<T extends Record<string, AnyFn>>(activities: T): T {
  const wrapped: Record<string, AnyFn> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        throw toActivityFailure(e);
      }
    };
    Object.defineProperty(wrapped[name], 'name', { value: name });
  }
  return wrapped as T;
}
