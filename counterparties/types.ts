/**
 * Counterparty due diligence: the group's review of each counterparty VASP, overridable per subsidiary.
 * Workflow-safe: types and pure functions only.
 */

/** The network's review values (`POST /tf/vasps/{vaspDID}/review`). */
export const REVIEW_VALUES = ['TRUSTED', 'BLOCKED', 'MANUAL'] as const;
export type ReviewValue = (typeof REVIEW_VALUES)[number];
/** What a counterparty nobody reviewed reads as. */
export const UNREVIEWED = 'UNREVIEWED';
export type EffectiveReviewValue = ReviewValue | typeof UNREVIEWED;

/** Whose review a row is: the whole group's, or one subsidiary's override. */
export type ReviewScope = { kind: 'group' } | { kind: 'subsidiary'; vaspDid: string };

export interface CounterpartyReview {
  /** The reviewed counterparty VASP. */
  vaspDid: string;
  /** `null` for the group's review, else the subsidiary whose override this is. */
  subsidiaryDid: string | null;
  reviewValue: ReviewValue;
  note: string;
  /** The principal's stable id (lib/principal.ts auditActor). */
  reviewedBy: string;
  reviewedAt: string;
  /** When the review must be done again; `null` when no date was set. */
  dueAt: string | null;
  /** The counterparty's incorporation country (ISO 3166-1 alpha-2) as the directory said when reviewed. */
  jurisdiction: string | null;
}

/** The review that applies to one subsidiary's transfers with a counterparty: its own row, else the group's. */
export interface EffectiveReview {
  vaspDid: string;
  reviewValue: EffectiveReviewValue;
  /** Where the value came from. */
  source: 'subsidiary' | 'group' | 'none';
  review?: CounterpartyReview;
}

/** The subsidiary's row wins over the group's; neither → unreviewed. */
export function effectiveReview(
  vaspDid: string,
  group: CounterpartyReview | undefined,
  subsidiary: CounterpartyReview | undefined,
): EffectiveReview {
  if (subsidiary) return { vaspDid, reviewValue: subsidiary.reviewValue, source: 'subsidiary', review: subsidiary };
  if (group) return { vaspDid, reviewValue: group.reviewValue, source: 'group', review: group };
  return { vaspDid, reviewValue: UNREVIEWED, source: 'none' };
}

/** One disagreement between our reviews and the network's, for one of the group's VASPs. */
export interface ReviewDifference {
  /** The group's VASP whose reviews at the network were compared. */
  vaspDid: string;
  reviewedVaspDid: string;
  /** What we publish; null when we have no review the network holds. */
  ours: ReviewValue | null;
  /** What the network holds; null when it has none. */
  network: ReviewValue | null;
}

/** What the reconciliation of reviews with the network (workflows/counterparty-review-sync.ts) found and did. */
export interface ReviewSyncReport {
  trigger: 'schedule' | 'api';
  pushed: number;
  failed: number;
  /** Per VASP of the group: the differences left after the pushes. */
  differences: ReviewDifference[];
  /** The group's VASPs whose reviews the network would not list (unreachable, say): compared next time. */
  unread: string[];
}
