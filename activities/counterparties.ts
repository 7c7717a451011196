import type { Pool } from 'pg';
import { recordAuditEntry } from '../audit/store';
import { fillJurisdictions } from '../counterparties/jurisdiction';
import { differencesFor, networkReviewsOf, pushPending, type PushOutcome } from '../counterparties/push';
import type { ReviewDifference, ReviewSyncReport } from '../counterparties/types';
import { systemPrincipal } from '../lib/principal';
import type { NetworkClient } from '../network/client';
import { activityIdempotencyKey, activityWorkflowId } from './context';

const SYNC = systemPrincipal('counterparty-review-sync');

/** The reconciliation of counterparty reviews with the network (workflows/counterparty-review-sync.ts). */
export function counterpartyActivities(deps: { pool: Pool; network: NetworkClient }) {
  const network = deps.network.at('low');
  return {
    /**
     * Pushes every review not yet at the network (each failure stays recorded for the next run), and fills in the
     * jurisdictions the directory knows by now.
     */
    async pushPendingReviews(): Promise<PushOutcome> {
      const outcome = await pushPending({ pool: deps.pool, network }, { limit: 10_000 });
      // Best effort: a directory that is down leaves them for the next run, and must not hold up the report.
      await fillJurisdictions({ pool: deps.pool, network }).catch(() => 0);
      return outcome;
    },

    /** The network's reviews by `vaspDid` against ours; `read: false` when the network would not list them. */
    async compareReviewsAtNetwork(input: {
      vaspDid: string;
    }): Promise<{ read: boolean; differences: ReviewDifference[] }> {
      let held;
      try {
        held = await networkReviewsOf(network, input.vaspDid);
      } catch (e) {
        if ((e as { retryable?: boolean }).retryable) throw e;
        return { read: false, differences: [] };
      }
      return { read: true, differences: await differencesFor(deps.pool, input.vaspDid, held) };
    },

    async recordReviewSyncReport(report: ReviewSyncReport): Promise<void> {
      await recordAuditEntry(
        deps.pool,
        {
          actor: 'system:counterparty-review-sync',
          action: 'counterparty.sync',
          subject: activityWorkflowId() ?? 'counterparty-review-sync',
          details: { principal: SYNC, report },
        },
        { idempotencyKey: activityIdempotencyKey() },
      );
    },
  };
}
