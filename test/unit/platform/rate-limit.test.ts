import { loadNetworkBudgetConfig } from '../../../config';
import { RateLimitedError } from '../../../lib/errors';
import { bucketShape, RateBudget, SEND_DELAY_ALLOWANCE_MS, type BudgetStore } from '../../../network/rate-budget';
import { loadSandboxConfig } from '../../../sandbox/config';
import { RateLimiter } from '../../../sandbox/rate-limit/limiter';

describe("the sandbox's rate limit (the network's rule)", () => {
  it('admits `limit` calls in any sliding window, then blocks every call of that credential for the lockout', () => {
    let now = 0;
    const limiter = new RateLimiter({ limit: 3, windowMs: 1000, lockoutMs: 400 }, () => now);
    for (const t of [0, 100, 200]) {
      now = t;
      expect(limiter.admit('a')).toEqual({ admitted: true });
    }
    now = 300;
    expect(limiter.admit('a')).toEqual({ admitted: false, retryAfterMs: 400, lockoutStarted: true });
    // Another credential has its own count.
    expect(limiter.admit('b')).toEqual({ admitted: true });
    now = 650;
    expect(limiter.admit('a')).toEqual({ admitted: false, retryAfterMs: 50, lockoutStarted: false });
    // Lockout over, but the window still holds three calls: over again.
    now = 800;
    expect(limiter.admit('a')).toMatchObject({ admitted: false, lockoutStarted: true });
    // The lockout (until 1200) is over and the three calls have left the window (1000 ms after each).
    now = 1250;
    expect(limiter.admit('a')).toEqual({ admitted: true });
    expect(limiter.stats().find((s) => s.clientId === 'a')).toMatchObject({
      inWindow: 1,
      rejected: 3,
      lockouts: 2,
      lockedUntil: null,
    });
  });

  it("has no limit without settings, and reads SANDBOX_RATE_* with the network's numbers by default", () => {
    const open = new RateLimiter(undefined);
    for (let i = 0; i < 10_000; i++) expect(open.admit('a').admitted).toBe(true);
    expect(loadSandboxConfig({}).rateLimit).toEqual({ limit: 6000, windowMs: 300_000, lockoutMs: 10_000 });
    expect(
      loadSandboxConfig({ SANDBOX_RATE_LIMIT: '50', SANDBOX_RATE_WINDOW: '5s', SANDBOX_RATE_LOCKOUT: '2s' }).rateLimit,
    ).toEqual({ limit: 50, windowMs: 5000, lockoutMs: 2000 });
    expect(loadSandboxConfig({ SANDBOX_RATE_LIMIT: 'off' }).rateLimit).toBeUndefined();
    expect(() => loadSandboxConfig({ SANDBOX_RATE_LIMIT: 'many' })).toThrow(/SANDBOX_RATE_LIMIT/);
  });
});

describe("the group's network budget", () => {
  it("reads NETWORK_RATE_* with the network's limit by default, and refuses a reserve the burst cannot hold", () => {
    expect(loadNetworkBudgetConfig({})).toEqual({
      enabled: true,
      limit: 6000,
      windowMs: 300_000,
      burst: 300,
      reserve: 150,
      maxWaitMs: 15_000,
      lockoutMs: 10_000,
    });
    expect(loadNetworkBudgetConfig({ NETWORK_RATE_LIMIT: 'off' }).enabled).toBe(false);
    expect(() => loadNetworkBudgetConfig({ NETWORK_RATE_BURST: '20', NETWORK_RATE_RESERVE: '20' })).toThrow(
      /NETWORK_RATE_RESERVE/,
    );
    expect(() => loadNetworkBudgetConfig({ NETWORK_RATE_WINDOW: '300' })).toThrow(/NETWORK_RATE_WINDOW/);
  });

  it('sizes the bucket so that any window of the network (plus the send delay) sees at most the limit', () => {
    const shape = bucketShape({ limit: 6000, windowMs: 300_000, burst: 300 });
    expect(shape.capacity).toBe(300);
    expect(shape.capacity + (shape.ratePerSecond * (300_000 + SEND_DELAY_ALLOWANCE_MS)) / 1000).toBeCloseTo(6000, 6);
  });

  it('sleeps until the store says a call is free, and gives up with a retryable RateLimitedError past the bound', async () => {
    let now = 0;
    const answers = [
      { granted: false, tokens: 0.5, blockedUntil: null },
      { granted: true, tokens: 0, blockedUntil: null },
    ];
    const floors: number[] = [];
    const store: BudgetStore = {
      take: async (q) => {
        floors.push(q.floor);
        return { ...answers.shift()!, at: new Date(now) };
      },
      lockout: async () => undefined,
    };
    const slept: number[] = [];
    const config = {
      enabled: true,
      limit: 12,
      windowMs: 10_000,
      burst: 2,
      reserve: 1,
      maxWaitMs: 5000,
      lockoutMs: 10_000,
    };
    const budget = new RateBudget(
      store,
      config,
      'client',
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    await budget.take('low', 'GET /x');
    // Refill (12 - 2) per (10 + 2) s; 1.5 tokens short of the reserve plus one: 1.8 s (plus up to a quarter of spread).
    expect(floors).toEqual([1, 1]);
    expect(slept[0]).toBeGreaterThanOrEqual(1799);
    expect(slept[0]).toBeLessThanOrEqual(1800 * 1.25 + 1);

    // A low call that waited half the bound takes at the floor of high ones.
    const seen: number[] = [];
    now = 0;
    const aging = new RateBudget(
      {
        take: async (q) => {
          seen.push(q.floor);
          return { granted: q.floor === 0, tokens: 0.2, blockedUntil: null, at: new Date(now) };
        },
        lockout: async () => undefined,
      },
      config,
      'client',
      () => now,
      async (ms) => {
        now += ms;
      },
    );
    await aging.take('low', 'GET /v1/addresses');
    expect(seen[0]).toBe(1);
    expect(seen.at(-1)).toBe(0);
    expect(now).toBeGreaterThanOrEqual(2500);
    expect(now).toBeLessThan(5000);

    // A block shorter than the bound is waited out in the call: no attempt of the activity is spent on it.
    now = 0;
    let blockedOnce = true;
    const waited: number[] = [];
    const short = new RateBudget(
      {
        take: async () => {
          const r = blockedOnce
            ? { granted: false, tokens: 0, blockedUntil: new Date(now + 4000) }
            : { granted: true, tokens: 0, blockedUntil: null };
          blockedOnce = false;
          return { ...r, at: new Date(now) };
        },
        lockout: async () => undefined,
      },
      config,
      'client',
      () => now,
      async (ms) => {
        waited.push(ms);
        now += ms;
      },
    );
    await short.take('high', 'POST /tx/confirm');
    expect(waited).toHaveLength(1);
    expect(waited[0]).toBeGreaterThanOrEqual(4000);
    expect(waited[0]).toBeLessThanOrEqual(4250);

    const blocked = new RateBudget(
      {
        take: async () => ({ granted: false, tokens: 5, blockedUntil: new Date(now + 8000), at: new Date(now) }),
        lockout: async () => undefined,
      },
      config,
      'client',
      () => now,
      async () => undefined,
    );
    const e = await blocked.take('high', 'POST /tx/create').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RateLimitedError);
    expect((e as RateLimitedError).retryable).toBe(true);
    expect((e as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(8000);
  });
});
