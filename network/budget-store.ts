import type { Pool } from 'pg';

/** A take from the shared bucket of one credential (network/rate-budget.ts decides the numbers). */
export interface BudgetTake {
  credential: string;
  /** The bucket's size, and its refill in tokens per second. */
  capacity: number;
  ratePerSecond: number;
  /** Tokens that must remain after the take: 0 for high-priority calls, the reserve for the others. */
  floor: number;
}

export interface BudgetAnswer {
  granted: boolean;
  /** The level after the statement, the block and the database's clock, all as the statement saw them. */
  tokens: number;
  blockedUntil: Date | null;
  at: Date;
}

// The level now: what was left plus the refill since, never above the capacity. `greatest` keeps the clock monotonic
// when a statement's now() (its transaction's start) precedes the previous taker's: no refill is counted twice.
const LEVEL = `least($2::float8, b.tokens + greatest(0, extract(epoch from now() - b.refreshed_at)) * $3::float8)`;
const OPEN = `(b.blocked_until is null or b.blocked_until <= now())`;
const OK = `(${OPEN} and ${LEVEL} - 1 >= $4::float8)`;

/**
 * Takes one token if the bucket holds more than `floor` and no block is in force, in one statement: the row lock of
 * the upsert serialises concurrent takers across processes, and every expression reads the row as the previous
 * taker left it. A new credential starts with a full bucket.
 */
export async function takeNetworkBudget(pool: Pool, q: BudgetTake): Promise<BudgetAnswer> {
  const { rows } = await pool.query<{ granted: boolean; tokens: number; blocked_until: Date | null; at: Date }>(
    `insert into network_rate_budget as b (credential, tokens, refreshed_at, last_granted, granted)
     values ($1, $2::float8 - 1, now(), true, 1)
     on conflict (credential) do update set
       tokens = case when ${OK} then ${LEVEL} - 1 else ${LEVEL} end,
       refreshed_at = greatest(b.refreshed_at, now()),
       last_granted = ${OK},
       granted = b.granted + case when ${OK} then 1 else 0 end,
       refused = b.refused + case when ${OK} then 0 else 1 end
     returning last_granted as granted, tokens, blocked_until, now() as at`,
    [q.credential, q.capacity, q.ratePerSecond, q.floor],
  );
  const r = rows[0]!;
  return { granted: r.granted, tokens: Number(r.tokens), blockedUntil: r.blocked_until, at: r.at };
}

/**
 * The network answered 429: no process sends before `now + blockMs`, and the bucket restarts empty (the network counted
 * more than the budget did, e.g. calls made with the same credential elsewhere).
 */
export async function recordNetworkLockout(pool: Pool, credential: string, blockMs: number): Promise<void> {
  await pool.query(
    `insert into network_rate_budget as b (credential, tokens, refreshed_at, blocked_until, rate_limited)
     values ($1, 0, now(), now() + make_interval(secs => $2::float8 / 1000), 1)
     on conflict (credential) do update set
       tokens = 0,
       refreshed_at = greatest(b.refreshed_at, now()),
       blocked_until = greatest(b.blocked_until, excluded.blocked_until),
       rate_limited = b.rate_limited + 1`,
    [credential, blockMs],
  );
}

export interface BudgetRow {
  credential: string;
  tokens: number;
  blockedUntil: Date | null;
  granted: number;
  refused: number;
  rateLimited: number;
}

/** The credential's row as stored (no refill applied): counters for tests and operators. */
export async function readNetworkBudget(pool: Pool, credential: string): Promise<BudgetRow | undefined> {
  const { rows } = await pool.query<{
    credential: string;
    tokens: number;
    blocked_until: Date | null;
    granted: string;
    refused: string;
    rate_limited: string;
  }>(
    'select credential, tokens, blocked_until, granted, refused, rate_limited from network_rate_budget where credential = $1',
    [credential],
  );
  const r = rows[0];
  return (
    r && {
      credential: r.credential,
      tokens: Number(r.tokens),
      blockedUntil: r.blocked_until,
      granted: Number(r.granted),
      refused: Number(r.refused),
      rateLimited: Number(r.rate_limited),
    }
  );
}

/** The two statements as network/rate-budget.ts's BudgetStore takes them. */
export function networkBudgetStore(pool: Pool) {
  return {
    take: (q: BudgetTake) => takeNetworkBudget(pool, q),
    lockout: (credential: string, blockMs: number) => recordNetworkLockout(pool, credential, blockMs),
  };
}
