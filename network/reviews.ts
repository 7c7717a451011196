import type { NetworkClient } from './client';

/** The network's review values, as `POST /tf/vasps/{vaspDID}/review` takes them. */
export type NetworkReviewValue = 'TRUSTED' | 'BLOCKED' | 'MANUAL';

/** A review as the network answers it (TrustFrameworkMarkVaspReviewResponse). */
export interface NetworkReview {
  vaspDID?: string;
  reviewedVaspDID?: string;
  reviewValue?: string;
  note?: string;
  createdAt?: string;
  createdBy?: string;
}

/** `POST /tf/vasps/{vaspDID}/review`: `vaspDid` (one of ours) publishes its review of `reviewedVaspDid`. */
export function markVaspReview(
  network: NetworkClient,
  vaspDid: string,
  review: { reviewedVaspDid: string; reviewValue: NetworkReviewValue; note?: string },
): Promise<NetworkReview> {
  return network.call(
    'POST /tf/vasps/{vaspDID}/review',
    () =>
      network.api
        .post(`tf/vasps/${encodeURIComponent(vaspDid)}/review`, {
          json: {
            reviewedVaspDID: review.reviewedVaspDid,
            reviewValue: review.reviewValue,
            ...(review.note ? { note: review.note } : {}),
          },
        })
        .json<NetworkReview>(),
    // The same review again leaves the network as it was.
    { idempotent: true },
  );
}

/** How many VASPs one page of the directory asks for: the network's largest. */
const PER_PAGE = 1000;
/** A bound on the pages read, so a directory that never ends its list cannot keep a caller forever. */
const MAX_PAGES = 100;

/**
 * `GET /tf/simple/vasps?reviewedByVaspDID=…&reviewValue=…`: the DIDs of the VASPs `vaspDid` reviewed with
 * `reviewValue`, every page.
 */
export async function reviewedVasps(
  network: NetworkClient,
  vaspDid: string,
  reviewValue: NetworkReviewValue,
): Promise<string[]> {
  const dids: string[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await network.call(
      'GET /tf/simple/vasps?reviewedByVaspDID',
      () =>
        network.api
          .get('tf/simple/vasps', {
            searchParams: {
              reviewedByVaspDID: vaspDid,
              reviewValue,
              listingType: 'all',
              page,
              per_page: PER_PAGE,
              fields: 'did',
            },
          })
          .json<{ vasps?: { did?: unknown }[]; pagination?: { total?: number } }>(),
      { idempotent: true },
    );
    const vasps = body.vasps ?? [];
    for (const v of vasps) if (typeof v.did === 'string') dids.push(v.did);
    const total = body.pagination?.total;
    if (vasps.length < PER_PAGE || (typeof total === 'number' && dids.length >= total)) break;
  }
  return dids;
}
