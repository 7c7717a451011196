/**
 * Reviewing counterparties: checking a review, writing or deleting it with its audit row and what the group's VASPs
 * must then publish at the network, in one transaction per counterparty.
 */
import type { Pool, PoolClient } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { isCountryCode } from '../lib/countries';
import { NotFoundError, ValidationError } from '../lib/errors';
import { auditActor, type Principal } from '../lib/principal';
import { deleteReview, dropPush, putReview, reviewsOf, wantPush } from './store';
import {
  effectiveReview,
  REVIEW_VALUES,
  type CounterpartyReview,
  type EffectiveReview,
  type ReviewValue,
} from './types';

export const DID_RE = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;
export const MAX_NOTE_LENGTH = 2000;

/** The group the reviews are kept for: the gateway publishes the group's review, each subsidiary its effective one. */
export interface ReviewGroup {
  gatewayDid?: string;
  subsidiaryDids: readonly string[];
}

export interface ReviewInput {
  reviewValue: string;
  note: string;
  dueAt?: string | null;
  subsidiaryDid?: string | null;
  jurisdiction?: string | null;
}

export function checkDid(value: string, field: string): string {
  if (!DID_RE.test(value) || value.length > 200) throw new ValidationError(field, 'must be a DID (did:method:id)');
  return value;
}

/** A subsidiary of the group, or a 404 naming the field. */
export function checkSubsidiary(group: ReviewGroup, value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null) return null;
  checkDid(value, field);
  if (!group.subsidiaryDids.includes(value))
    throw new NotFoundError(`${value} is not one of the group's subsidiaries`, { field });
  return value;
}

/** The review as it is stored, or a ValidationError naming the first bad field. */
export function checkReview(
  group: ReviewGroup,
  vaspDid: string,
  input: ReviewInput,
  now: Date,
): Omit<CounterpartyReview, 'reviewedAt' | 'reviewedBy'> {
  checkDid(vaspDid, 'vaspDID');
  if (!(REVIEW_VALUES as readonly string[]).includes(input.reviewValue))
    throw new ValidationError('reviewValue', `must be one of ${REVIEW_VALUES.join(', ')}`);
  if (typeof input.note !== 'string' || input.note.length > MAX_NOTE_LENGTH)
    throw new ValidationError('note', `must be text of at most ${MAX_NOTE_LENGTH} characters`);
  let dueAt: string | null = null;
  if (input.dueAt !== undefined && input.dueAt !== null) {
    const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(input.dueAt);
    const at = ok ? new Date(input.dueAt) : undefined;
    if (!at || Number.isNaN(at.getTime()))
      throw new ValidationError('dueAt', 'must be an ISO 8601 date (2027-05-01) or date-time with a zone');
    if (at.getTime() <= now.getTime()) throw new ValidationError('dueAt', 'must be in the future');
    dueAt = at.toISOString();
  }
  const jurisdiction = input.jurisdiction ?? null;
  if (jurisdiction !== null && !isCountryCode(jurisdiction))
    throw new ValidationError('jurisdiction', 'must be an ISO 3166-1 alpha-2 country code (DE, SG)');
  if (group.gatewayDid === vaspDid || group.subsidiaryDids.includes(vaspDid))
    throw new ValidationError('vaspDID', "is one of the group's own VASPs, not a counterparty");
  return {
    vaspDid,
    subsidiaryDid: checkSubsidiary(group, input.subsidiaryDid, 'subsidiaryDid'),
    reviewValue: input.reviewValue as ReviewValue,
    note: input.note,
    dueAt,
    jurisdiction,
  };
}

/** The group's VASPs that publish a review at the network: the gateway (the group's) and each subsidiary. */
export function publishers(group: ReviewGroup): string[] {
  return [...(group.gatewayDid ? [group.gatewayDid] : []), ...group.subsidiaryDids];
}

/**
 * Brings what each of the group's VASPs should publish about `counterpartyDid` in line with its rows: the gateway
 * publishes the group's review, a subsidiary its own override else the group's. Answers whether any push is due.
 */
async function planPushes(tx: PoolClient, group: ReviewGroup, counterpartyDid: string): Promise<boolean> {
  const rows = await reviewsOf(tx, counterpartyDid);
  const groupRow = rows.find((r) => r.subsidiaryDid === null);
  let due = false;
  for (const vaspDid of publishers(group)) {
    const own = rows.find((r) => r.subsidiaryDid === vaspDid);
    const applies = own ?? groupRow;
    if (!applies) await dropPush(tx, vaspDid, counterpartyDid);
    else if (
      await wantPush(tx, {
        vaspDid,
        reviewedVaspDid: counterpartyDid,
        reviewValue: applies.reviewValue,
        note: applies.note,
      })
    )
      due = true;
  }
  return due;
}

const lockKey = (counterpartyDid: string) => `counterparty-review:${counterpartyDid}`;

/** Writes a review with its audit row and the pushes it makes due, atomically. */
export async function saveReview(
  pool: Pool,
  group: ReviewGroup,
  vaspDid: string,
  input: ReviewInput,
  by: Principal,
  now = new Date(),
): Promise<{ review: CounterpartyReview; pushDue: boolean }> {
  const checked = checkReview(group, vaspDid, input, now);
  return withTransaction(
    pool,
    async (tx) => {
      const review = await putReview(tx, { ...checked, reviewedBy: auditActor(by), reviewedByName: by.name });
      const pushDue = await planPushes(tx, group, vaspDid);
      await appendAuditEntry(tx, {
        actor: auditActor(by),
        action: 'counterparty.review',
        subject: vaspDid,
        details: { principal: by, review },
      });
      return { review, pushDue };
    },
    lockKey(vaspDid),
  );
}

/** Deletes one scope's review with its audit row; 404 when there was none. */
export async function removeReview(
  pool: Pool,
  group: ReviewGroup,
  vaspDid: string,
  subsidiaryDid: string | null | undefined,
  by: Principal,
): Promise<{ deleted: CounterpartyReview; pushDue: boolean }> {
  checkDid(vaspDid, 'vaspDID');
  const scope = checkSubsidiary(group, subsidiaryDid, 'subsidiaryDid');
  return withTransaction(
    pool,
    async (tx) => {
      const deleted = await deleteReview(tx, vaspDid, scope);
      if (!deleted)
        throw new NotFoundError(
          scope ? `${scope} has no review of ${vaspDid}` : `the group has no review of ${vaspDid}`,
          { field: scope ? 'subsidiaryDid' : 'vaspDID' },
        );
      const pushDue = await planPushes(tx, group, vaspDid);
      await appendAuditEntry(tx, {
        actor: auditActor(by),
        action: 'counterparty.review.delete',
        subject: vaspDid,
        details: { principal: by, deleted },
      });
      return { deleted, pushDue };
    },
    lockKey(vaspDid),
  );
}

export interface CounterpartyDetail {
  vaspDid: string;
  group: CounterpartyReview | null;
  overrides: CounterpartyReview[];
  /** The review that applies to each subsidiary's transfers. */
  effective: (EffectiveReview & { subsidiaryDid: string })[];
}

/** The group's review, every override, and what applies per subsidiary; a never-reviewed counterparty reads UNREVIEWED. */
export async function counterpartyDetail(pool: Pool, group: ReviewGroup, vaspDid: string): Promise<CounterpartyDetail> {
  checkDid(vaspDid, 'vaspDID');
  const rows = await reviewsOf(pool, vaspDid);
  const groupRow = rows.find((r) => r.subsidiaryDid === null);
  return {
    vaspDid,
    group: groupRow ?? null,
    overrides: rows.filter((r) => r.subsidiaryDid !== null),
    effective: group.subsidiaryDids.map((sub) => ({
      subsidiaryDid: sub,
      ...effectiveReview(
        vaspDid,
        groupRow,
        rows.find((r) => r.subsidiaryDid === sub),
      ),
    })),
  };
}
