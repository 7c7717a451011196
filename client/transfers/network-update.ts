/**
 * A network's update of an outgoing transfer (the notification webhook) passed to the transfer's workflow as its
 * `transactionUpdated` signal.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { networkUpdatedAtOf } from '../../lib/network-status';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { NetworkTransaction } from '../../network/transactions';
import type { TransferContext } from '../../outgoing/context';
import { transactionUpdatedSignal } from '../../workflows/outgoing-transfer.messages';

/**
 * Signals the outgoing transfer the transaction belongs to: ours when its transactionRef names one of our transfers
 * with this transaction, or its transaction id is on record. 'late' when the transfer's workflow has finished.
 */
export async function passOutgoingUpdate(
  temporal: Client,
  ctx: TransferContext,
  tx: NetworkTransaction,
  webhookId: string,
): Promise<'signalled' | 'late' | 'not-ours'> {
  let id: string | undefined;
  if (tx.transactionRef) {
    const row = await ctx.store.get(tx.transactionRef).catch(() => undefined);
    if (row && (!row.transactionId || row.transactionId === tx.id) && row.originatorVaspDid === tx.originatorVASPdid)
      id = row.id;
  }
  id ??= (await ctx.store.byTransactionId(tx.id))?.id;
  if (!id) return 'not-ours';
  try {
    await temporal.workflow.getHandle(workflowIds.outgoingTransfer(id)).signal(transactionUpdatedSignal, {
      transactionId: tx.id,
      status: tx.status!,
      source: 'webhook',
      webhookId,
      updatedAt: networkUpdatedAtOf(tx),
    });
    return 'signalled';
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return 'late';
    throw e;
  }
}
