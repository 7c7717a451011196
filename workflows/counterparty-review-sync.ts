import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReviewDifference, ReviewSyncReport } from '../counterparties/types';

const { pushPendingReviews, compareReviewsAtNetwork, recordReviewSyncReport } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5 },
});

export interface CounterpartyReviewSyncInput {
  trigger: ReviewSyncReport['trigger'];
  /** The group's VASPs that publish reviews: the gateway and each subsidiary. */
  vaspDids: string[];
}

/** Every VASP's reviews at the network against ours; a VASP the network would not list is reported unread. */
async function compareAll(vaspDids: string[]): Promise<Pick<ReviewSyncReport, 'differences' | 'unread'>> {
  const differences: ReviewDifference[] = [];
  const unread: string[] = [];
  for (const vaspDid of vaspDids) {
    const found = await compareReviewsAtNetwork({ vaspDid });
    if (found.read) differences.push(...found.differences);
    else unread.push(vaspDid);
  }
  return { differences, unread };
}

/**
 * The nightly reconciliation of counterparty reviews with the network (and on demand): pushes the reviews not yet
 * there, reads back each of the group's VASPs' review lists, and reports where they differ from ours, audited.
 */
export async function counterpartyReviewSync(input: CounterpartyReviewSyncInput): Promise<ReviewSyncReport> {
  const { pushed, failed } = await pushPendingReviews();
  const compared = await compareAll(input.vaspDids);
  const report: ReviewSyncReport = { trigger: input.trigger, pushed, failed, ...compared };
  await recordReviewSyncReport(report);
  return report;
}
