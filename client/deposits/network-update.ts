/**
 * A final status of a network message that deposits matched (the notification webhook saw it): their workflows check
 * at once rather than at the end of their recheck wait, which can be minutes (DEPOSIT_RECHECK_MAX). Best effort: the
 * recheck stays the fallback, so a failure here is logged by the caller and the delivery still acknowledged.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { waitingDepositsOf } from '../../deposits/store';
import { isFinalNetworkStatus } from '../../lib/network-status';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { NetworkTransaction } from '../../network/transactions';
import { depositMatchMovedSignal } from '../../workflows/deposit.messages';

/** Signals each deposit waiting on `tx`; answers how many. */
export async function wakeDeposits(deps: { temporal: Client; pool: Pool }, tx: NetworkTransaction): Promise<number> {
  if (!tx.status || !isFinalNetworkStatus(tx.status)) return 0;
  const ids = await waitingDepositsOf(deps.pool, tx.id);
  await Promise.all(
    ids.map((id) =>
      deps.temporal.workflow
        .getHandle(workflowIds.deposit(id))
        .signal(depositMatchMovedSignal)
        .catch((e: unknown) => {
          // Decided and ended meanwhile: nothing to wake.
          if (!(e instanceof WorkflowNotFoundError)) throw e;
        }),
    ),
  );
  return ids.length;
}
