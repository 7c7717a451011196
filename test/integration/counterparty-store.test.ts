import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import {
  deleteReview,
  dropPush,
  effectiveReviewFor,
  listReviews,
  putReview,
  recordPush,
  reviewsOf,
  unpushed,
  wantPush,
} from '../../counterparties/store';

// Only the database: this suite needs neither Temporal nor the sandbox.
const randomDid = () => `did:ethr:0x${randomBytes(20).toString('hex')}`;

const review = (vaspDid: string, subsidiaryDid: string | null, reviewValue: 'TRUSTED' | 'BLOCKED' | 'MANUAL') => ({
  vaspDid,
  subsidiaryDid,
  reviewValue,
  note: `${reviewValue} by test`,
  reviewedBy: 'oidc:tester',
  dueAt: null,
  jurisdiction: 'DE',
});

describe('counterparty review store: the group row, subsidiary overrides, the effective review, push state', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(process.env.TEST_DATABASE_URL!, 'orchestrator');
  });
  afterAll(async () => pool?.end());

  it('reads a never-reviewed counterparty as UNREVIEWED, the group row for all, and an override for its subsidiary', async () => {
    const [counterparty, subA, subB] = [randomDid(), randomDid(), randomDid()];
    expect(await effectiveReviewFor(pool, subA, counterparty)).toEqual({
      vaspDid: counterparty,
      reviewValue: 'UNREVIEWED',
      source: 'none',
    });
    await putReview(pool, review(counterparty, null, 'TRUSTED'));
    expect(await effectiveReviewFor(pool, subA, counterparty)).toMatchObject({
      reviewValue: 'TRUSTED',
      source: 'group',
    });
    await putReview(pool, review(counterparty, subA, 'BLOCKED'));
    expect(await effectiveReviewFor(pool, subA, counterparty)).toMatchObject({
      reviewValue: 'BLOCKED',
      source: 'subsidiary',
      review: { subsidiaryDid: subA, reviewedBy: 'oidc:tester', jurisdiction: 'DE' },
    });
    expect(await effectiveReviewFor(pool, subB, counterparty)).toMatchObject({
      reviewValue: 'TRUSTED',
      source: 'group',
    });
    expect((await reviewsOf(pool, counterparty)).map((r) => r.subsidiaryDid)).toEqual([null, subA]);

    // Filtered by subsidiary: its override replaces the group's row.
    const forA = await listReviews(pool, { subsidiaryDid: subA }, { limit: 500, order: 'desc' });
    expect(forA.rows.filter((r) => r.vaspDid === counterparty).map((r) => r.reviewValue)).toEqual(['BLOCKED']);
    const forB = await listReviews(pool, { subsidiaryDid: subB }, { limit: 500, order: 'desc' });
    expect(forB.rows.filter((r) => r.vaspDid === counterparty).map((r) => r.reviewValue)).toEqual(['TRUSTED']);

    expect((await deleteReview(pool, counterparty, subA))?.reviewValue).toBe('BLOCKED');
    expect(await deleteReview(pool, counterparty, subA)).toBeUndefined();
    expect(await effectiveReviewFor(pool, subA, counterparty)).toMatchObject({
      reviewValue: 'TRUSTED',
      source: 'group',
    });
  });

  it('replaces a scope’s row on a second write, and pages by review time', async () => {
    const [older, counterparty] = [randomDid(), randomDid()];
    await putReview(pool, review(older, null, 'BLOCKED'));
    await putReview(pool, review(counterparty, null, 'MANUAL'));
    await putReview(pool, review(counterparty, null, 'BLOCKED'));
    expect((await reviewsOf(pool, counterparty)).map((r) => r.reviewValue)).toEqual(['BLOCKED']);
    const first = await listReviews(pool, { reviewValue: 'BLOCKED' }, { limit: 1, order: 'desc' });
    expect(first.rows).toHaveLength(1);
    expect(first.rows[0]!.vaspDid).toBe(counterparty);
    expect(first.next).toBeDefined();
    const second = await listReviews(pool, { reviewValue: 'BLOCKED' }, { limit: 1, order: 'desc', cursor: first.next });
    expect(second.rows[0]?.vaspDid).toBe(older);
  });

  it('keeps a push pending until it is recorded, and pending again only when the value changes', async () => {
    const [ours, counterparty] = [randomDid(), randomDid()];
    const target = { vaspDid: ours, reviewedVaspDid: counterparty, reviewValue: 'TRUSTED' as const, note: 'n' };
    expect(await wantPush(pool, target)).toBe(true);
    expect((await unpushed(pool, 10, counterparty)).map((p) => p.state)).toEqual(['pending']);
    await recordPush(pool, target, { ok: false, error: 'network down' });
    expect(await unpushed(pool, 10, counterparty)).toMatchObject([{ state: 'failed', attempts: 1 }]);
    await recordPush(pool, target, { ok: true });
    expect(await unpushed(pool, 10, counterparty)).toEqual([]);
    expect(await wantPush(pool, target)).toBe(false);
    expect(await wantPush(pool, { ...target, reviewValue: 'BLOCKED' })).toBe(true);
    // An outcome for the older value does not mark the newer one pushed.
    expect(await recordPush(pool, target, { ok: true })).toBe('stale');
    expect(await unpushed(pool, 10, counterparty)).toMatchObject([{ reviewValue: 'BLOCKED', state: 'pending' }]);
  });

  it('makes a pushed row pending again when an older push is recorded after it: the network may hold the older value', async () => {
    const [ours, counterparty] = [randomDid(), randomDid()];
    const older = { vaspDid: ours, reviewedVaspDid: counterparty, reviewValue: 'TRUSTED' as const, note: 'n' };
    const newer = { ...older, reviewValue: 'BLOCKED' as const };
    await wantPush(pool, older);
    await wantPush(pool, newer);
    expect(await recordPush(pool, newer, { ok: true })).toBe('recorded');
    expect(await unpushed(pool, 10, counterparty)).toEqual([]);
    // The older value's request reached the network last.
    expect(await recordPush(pool, older, { ok: true })).toBe('stale');
    expect(await unpushed(pool, 10, counterparty)).toMatchObject([
      { reviewValue: 'BLOCKED', state: 'pending', attempts: 1 },
    ]);
    // A failure recorded for the older value counts the same way; a dropped row answers `gone`.
    expect(await recordPush(pool, older, { ok: false, error: 'timeout' })).toBe('stale');
    expect(await unpushed(pool, 10, counterparty)).toMatchObject([{ state: 'pending', lastError: null }]);
    await dropPush(pool, ours, counterparty);
    expect(await recordPush(pool, newer, { ok: true })).toBe('gone');
  });
});
