/**
 * Counterparty reviews' SQL: one row per (scope, counterparty VASP), the scope a subsidiary's DID for its override or
 * GROUP_SCOPE for the group's review; and what each of the group's VASPs should publish at the network
 * (counterparty_review_pushes), with whether it got there.
 */
import type { PoolClient } from 'pg';
import type { Queryable } from '../db/pool';
import { exactTimestamp, keyset, pageOf, type ListOrder, type Page } from '../db/listing';
import type { CursorKey } from '../lib/listing/cursor';
import { effectiveReview, type CounterpartyReview, type EffectiveReview, type ReviewValue } from './types';

/** The scope of the group's review: not a DID, so it never collides with a subsidiary's. */
export const GROUP_SCOPE = '*';

const scopeOf = (subsidiaryDid: string | null) => subsidiaryDid ?? GROUP_SCOPE;

const COLUMNS = `scope, vasp_did, review_value, note, reviewed_by, ${exactTimestamp('reviewed_at')} as reviewed_at,
  ${exactTimestamp('due_at')} as due_at, jurisdiction`;

interface Row {
  scope: string;
  vasp_did: string;
  review_value: ReviewValue;
  note: string;
  reviewed_by: string;
  reviewed_at: string;
  due_at: string | null;
  jurisdiction: string | null;
}

const toReview = (r: Row): CounterpartyReview => ({
  vaspDid: r.vasp_did,
  subsidiaryDid: r.scope === GROUP_SCOPE ? null : r.scope,
  reviewValue: r.review_value,
  note: r.note,
  reviewedBy: r.reviewed_by,
  reviewedAt: r.reviewed_at,
  dueAt: r.due_at,
  jurisdiction: r.jurisdiction,
});

/**
 * The review that applies to `subsidiaryDid`'s transfers with `counterpartyDid`: its own row, else the group's, else
 * UNREVIEWED. One query over the primary key: the subsidiary's row sorts first.
 */
export async function effectiveReviewFor(
  db: Queryable,
  subsidiaryDid: string,
  counterpartyDid: string,
): Promise<EffectiveReview> {
  const { rows } = await db.query<Row>(
    `select ${COLUMNS} from counterparty_reviews
      where vasp_did = $2 and scope in ($1, '${GROUP_SCOPE}')
      order by scope = '${GROUP_SCOPE}' limit 1`,
    [subsidiaryDid, counterpartyDid],
  );
  const row = rows[0];
  const review = row && toReview(row);
  return effectiveReview(
    counterpartyDid,
    review && review.subsidiaryDid === null ? review : undefined,
    review && review.subsidiaryDid !== null ? review : undefined,
  );
}

/** Every row about one counterparty: the group's (subsidiaryDid null) first, then the subsidiaries' overrides. */
export async function reviewsOf(db: Queryable, counterpartyDid: string): Promise<CounterpartyReview[]> {
  const { rows } = await db.query<Row>(
    `select ${COLUMNS} from counterparty_reviews where vasp_did = $1 order by scope = '${GROUP_SCOPE}' desc, scope`,
    [counterpartyDid],
  );
  return rows.map(toReview);
}

export interface ReviewFilter {
  reviewValue?: ReviewValue;
  /** Reviews due again before this time (those with no due date are never due). */
  dueBefore?: Date;
  jurisdiction?: string;
  /** Only the reviews that apply to this subsidiary: its overrides and the group's rows it does not override. */
  subsidiaryDid?: string;
}

// The sort key's unique id: a counterparty's rows differ by scope.
const ID = `vasp_did || ' ' || scope`;

/** Reviews, filtered, newest review first (or oldest), by review time then counterparty and scope. */
export async function listReviews(
  db: Queryable,
  filter: ReviewFilter,
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
): Promise<Page<CounterpartyReview>> {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.subsidiaryDid !== undefined) {
    params.push(filter.subsidiaryDid);
    const p = `$${params.length}`;
    where.push(
      `(scope = ${p} or (scope = '${GROUP_SCOPE}' and not exists (
         select 1 from counterparty_reviews o where o.scope = ${p} and o.vasp_did = r.vasp_did)))`,
    );
  }
  if (filter.reviewValue) add((p) => `review_value = ${p}`, filter.reviewValue);
  if (filter.dueBefore) add((p) => `due_at < ${p}`, filter.dueBefore);
  if (filter.jurisdiction) add((p) => `jurisdiction = ${p}`, filter.jurisdiction);
  const ks = keyset(params, 'reviewed_at', ID, page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  params.push(page.limit + 1);
  const { rows } = await db.query<Row & { id: string }>(
    `select ${COLUMNS}, ${ID} as id from counterparty_reviews r
      ${where.length ? `where ${where.join(' and ')}` : ''} ${ks.orderBy} limit $${params.length}`,
    params,
  );
  return pageOf(rows, page.limit, (r) => ({ at: r.reviewed_at, id: r.id }), toReview);
}

/** Writes (or replaces) the review of `review.vaspDid` in its scope; the time is the database's. */
export async function putReview(
  db: Queryable,
  review: Omit<CounterpartyReview, 'reviewedAt'> & { reviewedByName?: string },
): Promise<CounterpartyReview> {
  const { rows } = await db.query<Row>(
    `insert into counterparty_reviews (scope, vasp_did, review_value, note, reviewed_by, reviewed_by_name, due_at, jurisdiction)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (scope, vasp_did) do update set review_value = excluded.review_value, note = excluded.note,
       reviewed_by = excluded.reviewed_by, reviewed_by_name = excluded.reviewed_by_name,
       reviewed_at = clock_timestamp(), due_at = excluded.due_at, jurisdiction = excluded.jurisdiction
     returning ${COLUMNS}`,
    [
      scopeOf(review.subsidiaryDid),
      review.vaspDid,
      review.reviewValue,
      review.note,
      review.reviewedBy,
      review.reviewedByName ?? null,
      review.dueAt,
      review.jurisdiction,
    ],
  );
  return toReview(rows[0]!);
}

/** Deletes one scope's review; the deleted row, or undefined when there was none. */
export async function deleteReview(
  db: Queryable,
  counterpartyDid: string,
  subsidiaryDid: string | null,
): Promise<CounterpartyReview | undefined> {
  const { rows } = await db.query<Row>(
    `delete from counterparty_reviews where scope = $1 and vasp_did = $2 returning ${COLUMNS}`,
    [scopeOf(subsidiaryDid), counterpartyDid],
  );
  return rows[0] && toReview(rows[0]);
}

/** What one of the group's VASPs should publish about a counterparty, and whether the network has it. */
export interface ReviewPush {
  /** The group's VASP whose review it is at the network. */
  vaspDid: string;
  reviewedVaspDid: string;
  reviewValue: ReviewValue;
  note: string;
  state: 'pending' | 'pushed' | 'failed';
  attempts: number;
  lastError: string | null;
}

interface PushRow {
  vasp_did: string;
  reviewed_vasp_did: string;
  review_value: ReviewValue;
  note: string;
  state: ReviewPush['state'];
  attempts: number;
  last_error: string | null;
}

const toPush = (r: PushRow): ReviewPush => ({
  vaspDid: r.vasp_did,
  reviewedVaspDid: r.reviewed_vasp_did,
  reviewValue: r.review_value,
  note: r.note,
  state: r.state,
  attempts: r.attempts,
  lastError: r.last_error,
});

const PUSH_COLUMNS = 'vasp_did, reviewed_vasp_did, review_value, note, state, attempts, last_error';

/**
 * Records what `vaspDid` should publish about a counterparty: pending again when it differs from what is recorded,
 * unchanged when the network already has the same value and note. Answers whether a push is now due.
 */
export async function wantPush(
  db: Queryable,
  target: { vaspDid: string; reviewedVaspDid: string; reviewValue: ReviewValue; note: string },
): Promise<boolean> {
  const { rows } = await db.query<{ state: string }>(
    `insert into counterparty_review_pushes (vasp_did, reviewed_vasp_did, review_value, note, state)
     values ($1, $2, $3, $4, 'pending')
     on conflict (vasp_did, reviewed_vasp_did) do update set review_value = excluded.review_value,
       note = excluded.note, attempts = 0, last_error = null, updated_at = clock_timestamp(),
       state = case when counterparty_review_pushes.state = 'pushed'
                     and counterparty_review_pushes.review_value = excluded.review_value
                     and counterparty_review_pushes.note = excluded.note
                    then 'pushed' else 'pending' end
     returning state`,
    [target.vaspDid, target.reviewedVaspDid, target.reviewValue, target.note],
  );
  return rows[0]!.state !== 'pushed';
}

/** The network cannot forget a review: with nothing left to publish, the row goes and the reconciliation reports it. */
export async function dropPush(db: Queryable, vaspDid: string, reviewedVaspDid: string): Promise<void> {
  await db.query('delete from counterparty_review_pushes where vasp_did = $1 and reviewed_vasp_did = $2', [
    vaspDid,
    reviewedVaspDid,
  ]);
}

/** Pushes not yet at the network (pending or failed), oldest first. */
export async function unpushed(db: Queryable, limit: number, reviewedVaspDid?: string): Promise<ReviewPush[]> {
  const { rows } = await db.query<PushRow>(
    `select ${PUSH_COLUMNS} from counterparty_review_pushes
      where state <> 'pushed' and ($2::text is null or reviewed_vasp_did = $2)
      order by updated_at, vasp_did, reviewed_vasp_did limit $1`,
    [limit, reviewedVaspDid ?? null],
  );
  return rows.map(toPush);
}

/** Everything the group's VASPs should publish: what the reconciliation compares with the network. */
export async function allPushes(db: Queryable): Promise<ReviewPush[]> {
  const { rows } = await db.query<PushRow>(
    `select ${PUSH_COLUMNS} from counterparty_review_pushes order by vasp_did, reviewed_vasp_did`,
  );
  return rows.map(toPush);
}

/**
 * Records a push's outcome. Answers `stale` when the row changed since it was read: two pushes of one pair can reach
 * the network in either order, so the older value may be what it holds now. The row goes back to pending then, to be
 * sent again; `gone` when the row was dropped meanwhile.
 */
export async function recordPush(
  db: Queryable,
  push: Pick<ReviewPush, 'vaspDid' | 'reviewedVaspDid' | 'reviewValue' | 'note'>,
  outcome: { ok: true } | { ok: false; error: string },
): Promise<'recorded' | 'stale' | 'gone'> {
  const recorded = await db.query(
    `update counterparty_review_pushes
        set state = $5, attempts = attempts + 1, last_error = $6,
            pushed_at = case when $5 = 'pushed' then clock_timestamp() else pushed_at end
      where vasp_did = $1 and reviewed_vasp_did = $2 and review_value = $3 and note = $4`,
    [
      push.vaspDid,
      push.reviewedVaspDid,
      push.reviewValue,
      push.note,
      outcome.ok ? 'pushed' : 'failed',
      outcome.ok ? null : outcome.error.slice(0, 500),
    ],
  );
  if (recorded.rowCount) return 'recorded';
  // Whatever the row holds now (changed again since, even), sending it once more is safe.
  const stale = await db.query(
    `update counterparty_review_pushes set state = 'pending' where vasp_did = $1 and reviewed_vasp_did = $2`,
    [push.vaspDid, push.reviewedVaspDid],
  );
  return stale.rowCount ? 'stale' : 'gone';
}

/** Counterparties with a review whose jurisdiction is not known yet, for filling from the directory. */
export async function withoutJurisdiction(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ vasp_did: string }>(
    'select distinct vasp_did from counterparty_reviews where jurisdiction is null order by vasp_did limit $1',
    [limit],
  );
  return rows.map((r) => r.vasp_did);
}

/** Sets the counterparty's jurisdiction on its reviews that have none (a reviewer's own value stays). */
export async function fillJurisdiction(db: Queryable, counterpartyDid: string, country: string): Promise<void> {
  await db.query('update counterparty_reviews set jurisdiction = $2 where vasp_did = $1 and jurisdiction is null', [
    counterpartyDid,
    country,
  ]);
}

/** Every review's value by scope and counterparty: what workers keep in memory (counterparties/review-cache.ts). */
export async function allReviewValues(
  db: Queryable,
): Promise<{ scope: string; vaspDid: string; reviewValue: CounterpartyReview['reviewValue'] }[]> {
  const { rows } = await db.query<{ scope: string; vasp_did: string; review_value: CounterpartyReview['reviewValue'] }>(
    'select scope, vasp_did, review_value from counterparty_reviews',
  );
  return rows.map((r) => ({ scope: r.scope, vaspDid: r.vasp_did, reviewValue: r.review_value }));
}

/** The channel a change to the reviews is announced on (migration 0019's trigger). */
export async function listenForReviewChanges(client: Pick<PoolClient, 'query'>): Promise<void> {
  await client.query('listen counterparty_reviews');
}
