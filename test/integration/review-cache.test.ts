import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { deleteReview, putReview } from '../../counterparties/store';
import { ReviewCache } from '../../counterparties/review-cache';
import { eventually } from '../harness/platform';

// Only the database: the cache LISTENs on the test database and reloads on the trigger's notifications.
const randomDid = () => `did:ethr:0x${randomBytes(20).toString('hex')}`;
const review = (vaspDid: string, subsidiaryDid: string | null, reviewValue: 'TRUSTED' | 'BLOCKED' | 'MANUAL') => ({
  vaspDid,
  subsidiaryDid,
  reviewValue,
  note: 'cache test',
  reviewedBy: 'oidc:tester',
  dueAt: null,
  jurisdiction: null,
});

describe('the reviews a worker keeps in memory', () => {
  let pool: Pool;
  let cache: ReviewCache;
  beforeAll(async () => {
    pool = createPool(process.env.TEST_DATABASE_URL!, 'orchestrator');
    cache = new ReviewCache(pool);
    await cache.start();
  });
  afterAll(async () => {
    await cache?.stop();
    await pool?.end();
  });
  const until = (check: () => boolean) => eventually(async () => (check() ? true : undefined), 10_000, 20);

  it('follows every change: the group row, a subsidiary override winning for its subsidiary, a delete', async () => {
    const [counterparty, subA, subB] = [randomDid(), randomDid(), randomDid()];
    expect(cache.lookup(subA, counterparty)).toBe('UNREVIEWED');
    await putReview(pool, review(counterparty, null, 'TRUSTED'));
    await until(() => cache.lookup(subA, counterparty) === 'TRUSTED');
    await putReview(pool, review(counterparty, subA, 'BLOCKED'));
    await until(() => cache.lookup(subA, counterparty) === 'BLOCKED');
    expect(cache.lookup(subB, counterparty)).toBe('TRUSTED');
    await deleteReview(pool, counterparty, null);
    await until(() => cache.lookup(subB, counterparty) === 'UNREVIEWED');
    expect(cache.lookup(subA, counterparty)).toBe('BLOCKED');
  });

  it('answers nothing while its listener is gone (the database is asked instead), and catches up once back', async () => {
    const counterparty = randomDid();
    await pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike 'listen counterparty_reviews%' and pid <> pg_backend_pid()`,
    );
    await until(() => cache.lookup(randomDid(), counterparty) === undefined);
    // Changed while nobody listened: the reconnection's full load brings it.
    await putReview(pool, review(counterparty, null, 'MANUAL'));
    await until(() => cache.lookup(randomDid(), counterparty) === 'MANUAL');
  });

  it('answers nothing once stopped', async () => {
    const stopped = new ReviewCache(pool);
    await stopped.start();
    expect(stopped.lookup(randomDid(), randomDid())).toBe('UNREVIEWED');
    await stopped.stop();
    expect(stopped.lookup(randomDid(), randomDid())).toBeUndefined();
  });

  it('makes no connection after stop, though a reconnection was pending when it stopped', async () => {
    // A "database" that hangs up on every connection and counts them.
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const unreachable = createPool(url.toString(), 'orchestrator');
    try {
      const lost = new ReviewCache(unreachable);
      await lost.start(); // fails, and schedules a reconnection in a second
      await eventually(async () => (connections === 1 ? true : undefined), 5000, 10);
      await lost.stop();
      await new Promise((r) => setTimeout(r, 2500));
      expect(connections).toBe(1);
    } finally {
      await unreachable.end();
      await new Promise((r) => server.close(r));
    }
  });
});
