import type { RateLimit } from '../../../lib/api-transport';

/** How a refused credential past the limit is answered: held this long, then 429 with this Retry-After. */
export interface Throttled {
  delayMs: number;
  retryAfterSeconds: number;
}

export interface FailureThrottleSettings extends RateLimit {
  /** The hold of the first refusal past `max`; each further one in the window doubles it. */
  baseDelayMs?: number;
  /** The longest hold. */
  maxDelayMs?: number;
  /** Addresses remembered at most (memory stays bounded when many addresses fail). */
  maxAddresses?: number;
}

export const DEFAULT_BASE_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 10_000;
const DEFAULT_MAX_ADDRESSES = 10_000;

/** The hold of the `over`-th refusal past the limit (1, 2, …): base, twice base, … up to the cap. */
export function failureDelayMs(over: number, baseMs: number, capMs: number): number {
  return over < 1 ? 0 : Math.min(capMs, baseMs * 2 ** Math.min(over - 1, 30));
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Slows down refused credentials per client address without ever refusing one that verifies: the authentication
 * plugin verifies every credential first, serves a valid one at once, and asks this only about refusals. Within
 * `max` refusals per window an address gets its 401 at once; past it each refusal is held (base delay, doubling,
 * capped) and answered 429 with the seconds until the window ends. Only refusals are counted, so the people behind
 * one address (a company's NAT, or anyone a trusted proxy forwards) are never locked out by someone else's failures.
 * In memory, per API process, like the other rate limits.
 */
export class AuthFailureThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxAddresses: number;

  constructor(
    private readonly settings: FailureThrottleSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.baseDelayMs = settings.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = settings.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    this.maxAddresses = settings.maxAddresses ?? DEFAULT_MAX_ADDRESSES;
  }

  /** Counts one refused credential from `address`: undefined while within the limit, else how to answer it. */
  refused(address: string): Throttled | undefined {
    const at = this.now();
    let w = this.windows.get(address);
    if (!w || at - w.startedAt >= this.settings.windowMs) {
      if (w) this.windows.delete(address);
      this.makeRoom(at);
      w = { startedAt: at, failures: 0 };
      this.windows.set(address, w);
    }
    w.failures++;
    const over = w.failures - this.settings.max;
    if (over < 1) return undefined;
    return {
      delayMs: failureDelayMs(over, this.baseDelayMs, this.maxDelayMs),
      retryAfterSeconds: Math.max(1, Math.ceil((w.startedAt + this.settings.windowMs - at) / 1000)),
    };
  }

  /** Addresses with a window open (tests and diagnostics). */
  get size(): number {
    return this.windows.size;
  }

  /** Drops ended windows when full, then the oldest ones (a Map keeps insertion order). */
  private makeRoom(at: number): void {
    if (this.windows.size < this.maxAddresses) return;
    for (const [address, w] of this.windows) {
      if (at - w.startedAt >= this.settings.windowMs) this.windows.delete(address);
    }
    for (const address of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) break;
      this.windows.delete(address);
    }
  }
}
