import type { NetworkBudgetConfig } from './config';
import { RateLimitedError } from '../lib/errors';
import { metrics } from '../lib/metrics/registry';

/**
 * Who waits at the reserve. `high`: answering incoming transfers and creating outgoing ones (and anything not marked
 * otherwise); `low`: address-book reconciliation, status polls and sweeps, which can wait without anyone waiting on them.
 */
export type CallPriority = 'high' | 'low';

/** One take from the shared bucket and the block after a 429, as network/budget-store.ts stores them (injected: network/ does no SQL). */
export interface BudgetStore {
  take(q: { credential: string; capacity: number; ratePerSecond: number; floor: number }): Promise<{
    granted: boolean;
    tokens: number;
    blockedUntil: Date | null;
    at: Date;
  }>;
  lockout(credential: string, blockMs: number): Promise<void>;
}

/**
 * What may lie between a token's take and the call's arrival at the network (event loop, body parsing): the refill is
 * sized so that the calls taken in any window this much longer than the network's stay within its limit.
 */
export const SEND_DELAY_ALLOWANCE_MS = 2000;

/**
 * The bucket's shape for a limit: `burst` tokens at most, refilled so that burst + refill over (window + allowance) is
 * the limit. Any window of the network's sees at most `limit` calls of ours, whichever way the network counts (fixed
 * or sliding window).
 */
export function bucketShape(config: Pick<NetworkBudgetConfig, 'limit' | 'windowMs' | 'burst'>): {
  capacity: number;
  ratePerSecond: number;
} {
  return {
    capacity: config.burst,
    ratePerSecond: (config.limit - config.burst) / ((config.windowMs + SEND_DELAY_ALLOWANCE_MS) / 1000),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The group's one budget of calls to the network for one credential, shared by every process through the store. A
 * call takes a token before it leaves; when none is free (or a 429's block is in force) it sleeps until one should be,
 * and gives up with a retryable RateLimitedError past `maxWaitMs`, so an activity fails over to Temporal's retry
 * instead of outliving its timeout. Low-priority calls leave the reserve to high ones for the first half of that wait.
 */
export class RateBudget {
  private readonly shape: { capacity: number; ratePerSecond: number };

  constructor(
    private readonly store: BudgetStore,
    readonly config: NetworkBudgetConfig,
    readonly credential: string,
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number) => Promise<void> = sleep,
  ) {
    this.shape = bucketShape(config);
  }

  async take(priority: CallPriority, what: string): Promise<void> {
    const start = this.now();
    const deadline = start + this.config.maxWaitMs;
    // A low-priority call that has waited half its bound competes as a high one: while answering and creating
    // transfers use the whole refill, reconciliation and polls still get a share instead of failing for good.
    const promoteAt = priority === 'high' ? start : start + this.config.maxWaitMs / 2;
    for (;;) {
      const floor = this.now() >= promoteAt ? 0 : this.config.reserve;
      const r = await this.store.take({ credential: this.credential, ...this.shape, floor });
      if (r.granted) return;
      const blockedMs = r.blockedUntil ? r.blockedUntil.getTime() - r.at.getTime() : 0;
      const refillMs = ((floor + 1 - r.tokens) / this.shape.ratePerSecond) * 1000;
      // Waiters that wake together would all miss but one: spread them over a fraction of the wait (of a block's end,
      // a quarter second, so that a block as long as the bound is still waited out).
      let waitMs = Math.max(
        blockedMs > 0 ? blockedMs + Math.random() * 250 : 0,
        refillMs * (1 + Math.random() * 0.25),
        1,
      );
      if (floor > 0) waitMs = Math.min(waitMs, Math.max(1, promoteAt - this.now()));
      if (this.now() + waitMs > deadline) {
        metrics.rateBudgetExhausted.inc({ priority });
        throw new RateLimitedError(
          `${what}: the group's network budget has no free call for ${Math.ceil(waitMs)} ms (${priority} priority${blockedMs > 0 ? ', the network blocked us after a 429' : ''})`,
          { retryAfterMs: Math.ceil(waitMs), priority },
        );
      }
      await this.wait(waitMs);
    }
  }

  /** The network answered 429: every process waits `blockMs` before its next call. */
  lockedOut(blockMs: number): Promise<void> {
    metrics.rateBudgetLockouts.inc();
    return this.store.lockout(this.credential, blockMs);
  }
}

/** The budget of `credential` (the network client id), or none when NETWORK_RATE_LIMIT=off. */
export function createRateBudget(
  store: BudgetStore,
  config: NetworkBudgetConfig,
  credential: string,
): RateBudget | undefined {
  return config.enabled ? new RateBudget(store, config, credential) : undefined;
}
