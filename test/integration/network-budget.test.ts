import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { networkBudgetStore, readNetworkBudget, takeNetworkBudget } from '../../network/budget-store';
import type { NetworkBudgetConfig } from '../../config';
import { RateLimitedError } from '../../lib/errors';
import { NetworkClient } from '../../network/client';
import { fetchViewer } from '../../network/directory';
import { escrowDidKey } from '../../network/pii';
import { RateBudget } from '../../network/rate-budget';
import { groupSeed, randomSecret, startSandbox, testEnv, type RunningSandbox } from '../harness/platform';

jest.setTimeout(120_000);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The group's one rate budget (network/rate-budget.ts over network/budget-store.ts) and the sandbox's limit, over real
 * PostgreSQL and HTTP. Each "process" is a client with a pool of its own: they share nothing but the database.
 */
describe('the network rate budget', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  // Few connections, closed after each test: the database server is shared with every other run on the machine.
  let pools: Pool[] = [];
  const pool = () => {
    const p = createPool(testEnv().databaseUrl, 'orchestrator', { max: 3 });
    pools.push(p);
    return p;
  };

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
  });
  afterEach(async () => {
    await Promise.all(pools.map((p) => p.end()));
    pools = [];
  });
  afterAll(async () => sb?.close());

  const limit = async (body: unknown): Promise<Json> => {
    const r = await fetch(`${sb.url}/sandbox/rate-limit`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    return (await r.json()) as Json;
  };
  const rejectedFor = async (clientId: string): Promise<number> => {
    const body = (await (await fetch(`${sb.url}/sandbox/rate-limit`, { headers: sb.testHeaders() })).json()) as Json;
    return (body.credentials as Json[]).find((c) => c.clientId === clientId)?.rejected ?? 0;
  };
  const budgetConfig = (over: Partial<NetworkBudgetConfig>): NetworkBudgetConfig => ({
    enabled: true,
    limit: 20,
    windowMs: 2000,
    burst: 4,
    reserve: 2,
    maxWaitMs: 20_000,
    lockoutMs: 1000,
    ...over,
  });
  const budgetedClient = (config: NetworkBudgetConfig, p = pool()) =>
    new NetworkClient(sb.networkConfig(g.gatewayUser), {
      budget: new RateBudget(networkBudgetStore(p), config, g.gatewayUser.clientId),
    });

  it('one atomic statement per take: 4 processes x 60 concurrent takes on 50 tokens grant exactly 50, low ones stop at the reserve', async () => {
    const credential = `atomic-${randomSecret()}`;
    const procs = [pool(), pool(), pool(), pool()];
    const take = (p: Pool, floor: number) =>
      takeNetworkBudget(p, { credential, capacity: 50, ratePerSecond: 1e-9, floor });
    // The row exists before the race so that every take contends on the same lock.
    expect((await take(procs[0]!, 0)).granted).toBe(true);
    const low = await Promise.all(procs.flatMap((p) => Array.from({ length: 30 }, () => take(p, 10))));
    expect(low.filter((r) => r.granted)).toHaveLength(39); // 49 left, 10 kept back
    const high = await Promise.all(procs.flatMap((p) => Array.from({ length: 30 }, () => take(p, 0))));
    expect(high.filter((r) => r.granted)).toHaveLength(10);
    const row = await readNetworkBudget(procs[0]!, credential);
    expect(row).toMatchObject({ granted: 50, refused: 240 - 49 });
    expect(row!.tokens).toBeGreaterThanOrEqual(0);
    expect(row!.tokens).toBeLessThan(0.001);
  });

  it('the sandbox answers 429 with Retry-After over the limit, on every endpoint of that credential, until the lockout ends', async () => {
    const other = { clientId: g.externalUser.clientId, clientSecret: g.externalUser.clientSecret };
    const [token, piiToken, otherToken] = await Promise.all([
      sb.token(g.gatewayUser),
      sb.token(g.gatewayUser, `${sb.url}/pii`),
      sb.token(other),
    ]);
    await limit({ limit: 3, windowSeconds: 60, lockoutSeconds: 2, reset: true });
    try {
      const viewer = (t: string) => fetch(`${sb.url}/auth/viewer`, { headers: { authorization: `Bearer ${t}` } });
      for (let i = 0; i < 3; i++) expect((await viewer(token)).status).toBe(200);
      const over = await viewer(token);
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('2');
      expect(await over.json()).toMatchObject({ err: { name: 'TooManyRequestsError', code: 429 } });
      // The personal-data service is blocked too; another credential is not.
      const pii = await fetch(`${sb.url}/pii/get-escrow-didkey?vaspDID=${g.subA}`, {
        headers: { authorization: `Bearer ${piiToken}` },
      });
      expect(pii.status).toBe(429);
      expect((await viewer(otherToken)).status).toBe(200);
      const state = (await (await fetch(`${sb.url}/sandbox/rate-limit`, { headers: sb.testHeaders() })).json()) as Json;
      expect(state.settings).toEqual({ limit: 3, windowSeconds: 60, lockoutSeconds: 2 });
      expect((state.credentials as Json[]).find((c) => c.clientId === g.gatewayUser.clientId)).toMatchObject({
        inWindow: 3,
        rejected: 2,
        lockouts: 1,
      });
      // Raised at run time: after the lockout the same credential goes on.
      await limit({ limit: 100 });
      await new Promise((r) => setTimeout(r, 2100));
      expect((await viewer(token)).status).toBe(200);
    } finally {
      await limit({ limit: null, reset: true });
    }
  });

  it('two processes sharing a budget that matches the sandbox quota never meet a 429', async () => {
    await limit({ limit: 20, windowSeconds: 2, lockoutSeconds: 1, reset: true });
    try {
      const config = budgetConfig({ limit: 20, windowMs: 2000, burst: 4 });
      const [a, b] = [budgetedClient(config), budgetedClient(config)];
      const started = Date.now();
      // 60 calls, both processes at once, mixed API and personal-data service: three windows' worth.
      const calls = await Promise.all(
        [a, b].flatMap((c) =>
          Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? escrowDidKey(c, g.subA) : fetchViewer(c))),
        ),
      );
      expect(calls).toHaveLength(60);
      expect(await rejectedFor(g.gatewayUser.clientId)).toBe(0);
      // The budget let them through at its refill rate, (20 - 4) per (2 + 2) s after the burst: no faster, not much slower.
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThan(((60 - 4) / 4) * 1000 * 0.9);
      expect(elapsed).toBeLessThan(((60 - 4) / 4) * 1000 * 1.6);
    } finally {
      await limit({ limit: null, reset: true });
    }
  });

  it('a budget above the quota meets 429s: a typed retryable error with Retry-After, and the block holds every process', async () => {
    await limit({ limit: 5, windowSeconds: 60, lockoutSeconds: 2, reset: true });
    try {
      const config = budgetConfig({ limit: 1000, windowMs: 2000, burst: 100, reserve: 10, lockoutMs: 5000 });
      const pa = pool();
      const [a, b] = [budgetedClient(config, pa), budgetedClient(config)];
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => fetchViewer(a)));
      const refused = results
        .filter((r) => r.status === 'rejected')
        .map((r) => (r as PromiseRejectedResult).reason as unknown);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(refused).toHaveLength(3);
      for (const e of refused) {
        expect(e).toBeInstanceOf(RateLimitedError);
        expect(e).toMatchObject({ retryable: true, details: { networkStatus: 429 } });
        expect((e as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
        expect((e as RateLimitedError).retryAfterMs).toBeLessThanOrEqual(2000);
      }
      const row = await readNetworkBudget(pa, g.gatewayUser.clientId);
      expect(row!.rateLimited).toBeGreaterThanOrEqual(1);
      expect(row!.blockedUntil!.getTime()).toBeGreaterThan(Date.now());
      // The other process waits out the block in the budget instead of calling: no further 429 at the sandbox.
      const before = await rejectedFor(g.gatewayUser.clientId);
      await limit({ limit: 100 });
      const t0 = Date.now();
      await fetchViewer(b);
      expect(Date.now() - t0).toBeGreaterThan(500);
      expect(await rejectedFor(g.gatewayUser.clientId)).toBe(before);
    } finally {
      await limit({ limit: null, reset: true });
    }
  });

  it('high-priority calls proceed while low-priority ones wait at the reserve', async () => {
    // A fresh credential of its own: the bucket starts full (6), the reserve is 3, refill (12 - 6) per 4 s.
    const user = { clientId: g.externalUser.clientId, clientSecret: g.externalUser.clientSecret };
    const config = budgetConfig({ limit: 12, windowMs: 2000, burst: 6, reserve: 3 });
    const client = new NetworkClient(sb.networkConfig(user), {
      budget: new RateBudget(networkBudgetStore(pool()), config, `prio-${randomSecret()}`),
    });
    const low = client.at('low');
    const done: string[] = [];
    for (let i = 0; i < 3; i++) await fetchViewer(low);
    const t0 = Date.now();
    const waiting = fetchViewer(low).then(() => done.push('low'));
    await new Promise((r) => setTimeout(r, 100));
    await Promise.all([0, 1, 2].map(() => fetchViewer(client).then(() => done.push('high'))));
    const highMs = Date.now() - t0;
    await waiting;
    expect(done).toEqual(['high', 'high', 'high', 'low']);
    expect(highMs).toBeLessThan(1000);
    // The low call needed the bucket back above the reserve: 4 tokens from empty at 1.5 per second.
    expect(Date.now() - t0).toBeGreaterThan(2000);
  });
});
