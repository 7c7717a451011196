import { ConfigError } from '../../lib/errors';

/**
 * The network's rate limit: at most `limit` calls per `windowMs` per credential, counted
 * over the API and the personal-data service; the call over the limit is answered 429 and every endpoint then answers
 * 429 for `lockoutMs`. The window slides (the strictest reading of "6000 calls per 300 s"): no span of `windowMs`
 * ever holds more than `limit` admitted calls.
 */
export interface RateLimitSettings {
  limit: number;
  windowMs: number;
  lockoutMs: number;
}

export const NETWORK_RATE_LIMIT: RateLimitSettings = { limit: 6000, windowMs: 300_000, lockoutMs: 10_000 };

export type Admission = { admitted: true } | { admitted: false; retryAfterMs: number; lockoutStarted: boolean };

interface CredentialLog {
  /** Arrival times of admitted calls, oldest first, from `head` on (a queue without shifting the array). */
  times: number[];
  head: number;
  lockedUntil: number;
  rejected: number;
  lockouts: number;
}

export interface CredentialStats {
  clientId: string;
  /** Calls admitted in the current window. */
  inWindow: number;
  lockedUntil: string | null;
  /** 429s answered to this credential since the sandbox started (or the counters were reset). */
  rejected: number;
  /** Lockouts started (calls over the limit, each followed by `lockoutMs` of 429s). */
  lockouts: number;
}

export function checkSettings(s: RateLimitSettings, where: string): RateLimitSettings {
  for (const [k, min] of [
    ['limit', 1],
    ['windowMs', 1],
    ['lockoutMs', 0],
  ] as const) {
    if (!Number.isInteger(s[k]) || s[k] < min || s[k] > 1_000_000_000) {
      throw new ConfigError(
        `${where}.${k}`,
        `${s[k]} is not a whole number from ${min}`,
        `Set ${k} to a whole number of at least ${min}`,
      );
    }
  }
  return s;
}

/**
 * Counts calls per client id in memory: the sandbox is one process, and a restart forgets the counts as a new
 * window would. `settings` undefined: no limit (the test harness's default).
 */
export class RateLimiter {
  private readonly logs = new Map<string, CredentialLog>();

  constructor(
    public settings: RateLimitSettings | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  admit(clientId: string): Admission {
    const s = this.settings;
    if (!s) return { admitted: true };
    const at = this.now();
    let log = this.logs.get(clientId);
    if (!log) this.logs.set(clientId, (log = { times: [], head: 0, lockedUntil: 0, rejected: 0, lockouts: 0 }));
    if (log.lockedUntil > at) {
      log.rejected++;
      return { admitted: false, retryAfterMs: log.lockedUntil - at, lockoutStarted: false };
    }
    this.expire(log, at, s.windowMs);
    if (log.times.length - log.head >= s.limit) {
      log.lockedUntil = at + s.lockoutMs;
      log.rejected++;
      log.lockouts++;
      return { admitted: false, retryAfterMs: s.lockoutMs, lockoutStarted: true };
    }
    log.times.push(at);
    return { admitted: true };
  }

  private expire(log: CredentialLog, at: number, windowMs: number): void {
    while (log.head < log.times.length && log.times[log.head]! <= at - windowMs) log.head++;
    // Compact once the dead prefix outgrows the live part.
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
  }

  stats(): CredentialStats[] {
    const at = this.now();
    return [...this.logs].map(([clientId, log]) => {
      if (this.settings) this.expire(log, at, this.settings.windowMs);
      return {
        clientId,
        inWindow: log.times.length - log.head,
        lockedUntil: log.lockedUntil > at ? new Date(log.lockedUntil).toISOString() : null,
        rejected: log.rejected,
        lockouts: log.lockouts,
      };
    });
  }

  /** Forgets every count and lockout (a new test round). */
  reset(): void {
    this.logs.clear();
  }
}
