/** The SQL of counterparty reviews: one current review per (reviewer VASP, reviewed VASP). */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

export interface VaspReview {
  vaspDID: string;
  reviewedVaspDID: string;
  reviewValue: string;
  note?: string;
  createdAt: string;
  createdBy: string;
}

/** Writes the review, replacing the reviewer's previous one of the same VASP. */
export async function putVaspReview(
  db: Db,
  review: { vaspDid: string; reviewedVaspDid: string; reviewValue: string; note?: string; createdBy: string },
): Promise<VaspReview> {
  const { rows } = await db.query<{
    vasp_did: string;
    reviewed_vasp_did: string;
    review_value: string;
    note: string | null;
    created_at: Date;
    created_by: string;
  }>(
    `insert into vasp_reviews (vasp_did, reviewed_vasp_did, review_value, note, created_by) values ($1, $2, $3, $4, $5)
     on conflict (vasp_did, reviewed_vasp_did) do update set review_value = excluded.review_value,
       note = excluded.note, created_at = now(), created_by = excluded.created_by
     returning vasp_did, reviewed_vasp_did, review_value, note, created_at, created_by`,
    [review.vaspDid, review.reviewedVaspDid, review.reviewValue, review.note ?? null, review.createdBy],
  );
  const r = rows[0]!;
  return {
    vaspDID: r.vasp_did,
    reviewedVaspDID: r.reviewed_vasp_did,
    reviewValue: r.review_value,
    ...(r.note !== null ? { note: r.note } : {}),
    createdAt: r.created_at.toISOString(),
    createdBy: r.created_by,
  };
}
