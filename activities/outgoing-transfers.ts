import { ConfigError } from '../lib/errors';
import type { TransferViewUpdate } from '../transfer-view/types';
import { writeTransferViewUpdate } from '../transfer-view/store';
import type { NetworkTransaction } from '../network/transactions';
import { networkUpdatedAtOf } from '../lib/network-status';
import type { TransferContext } from '../outgoing/context';
import { countLeaves, storePii } from '../outgoing/personal-data';
import { planTransfer, type TransferPlan } from '../outgoing/plan';
import { validateOutgoingBody } from '../outgoing/request';
import {
  cancelTransaction,
  createTransaction,
  recordSent,
  reportTransferStatus,
  sendTransfer,
  transactionInfo,
  type CreatedTransaction,
  type TransferReport,
} from '../outgoing/transaction';

export type { TransferPlan, PiiMode } from '../outgoing/plan';
export type { CreatedTransaction, TransferReport } from '../outgoing/transaction';

/** What the send step tells the workflow: the plan it followed, the transaction, and the list entry it wrote (if any). */
export interface SentTransfer {
  plan: TransferPlan;
  created: CreatedTransaction;
  view?: TransferViewUpdate;
}

/** Outgoing transfer activities. Each is idempotent: a retry finds what the previous attempt stored. */
export function transferActivities(ctx: TransferContext | undefined) {
  const need = (): TransferContext => {
    if (!ctx) throw new ConfigError('BASE_URL', 'the worker was started without the transfer context (no network configured)', 'Start the worker through workers/main.ts with the network variables set');
    return ctx;
  };
  return {
    /** Validates the stored request, refuses a gateway originator, decides the mode, encrypts and stores the PII (workflows started before sendOutgoingTransfer). */
    async prepareOutgoingTransfer(input: { id: string }): Promise<{ plan: TransferPlan; piiFields: number }> {
      const c = need();
      const request = await c.store.request(input.id);
      validateOutgoingBody(request.body);
      const plan = await planTransfer(c, request);
      const pii = await storePii(c, input.id, request, plan);
      return { plan, piiFields: pii ? countLeaves(pii.tree) : 0 };
    },

    /** Creates the network's transaction (transactionRef = the transfer id, so a retry never creates two; workflows started before sendOutgoingTransfer). */
    async createOutgoingTransaction(input: { id: string; plan: TransferPlan }): Promise<CreatedTransaction> {
      const c = need();
      const request = await c.store.request(input.id);
      const row = await c.store.get(input.id);
      return toCreated(await createTransaction(c, input.id, request, input.plan, row.pii));
    },

    /**
     * Prepare and create in one step (the request read and unsealed once; the API's plan trusted when given), then the
     * console's list entry for the created transaction (`view`: the workflow's entry before the step).
     */
    async sendOutgoingTransfer(input: { id: string; plan?: TransferPlan; view?: TransferViewUpdate }): Promise<SentTransfer> {
      const c = need();
      const { plan, tx } = await sendTransfer(c, input.id, input.plan);
      const created = toCreated(tx);
      return { plan, created, view: input.view && (await recordSent(c, input.view, plan, created)) };
    },

    /**
     * The last step: the console's list entry for the final state (a failed write is logged and answered, not retried:
     * the workflow writes it again), then the report to TRANSFER_CALLBACK_URL (failures retried by Temporal).
     */
    async finishOutgoingTransfer(input: { view?: TransferViewUpdate; report?: TransferReport }): Promise<{ viewWritten: boolean; delivered: boolean }> {
      const c = need();
      let viewWritten = false;
      if (input.view) {
        try {
          await writeTransferViewUpdate(c.pool, input.view);
          viewWritten = true;
        } catch (e) {
          c.logger.warn({ id: input.view.id, error: (e as Error).message }, 'the console transfer list could not be updated');
        }
      }
      return { viewWritten, delivered: input.report ? await reportTransferStatus(c, input.report) : false };
    },

    /** The fallback when webhooks are lost: the transaction's current status (a poll: low priority in the budget). */
    async fetchOutgoingStatus(input: { transactionId: string }): Promise<{ status: string; updatedAt?: string }> {
      const c = need();
      const tx = await transactionInfo({ ...c, network: c.network.at('low') }, input.transactionId);
      return { status: tx.status ?? 'UNKNOWN', updatedAt: networkUpdatedAtOf(tx) };
    },

    /**
     * Withdraws a transaction whose counterparty did not answer before the deadline, so that it cannot accept it (and
     * expect the funds) after the originator has given up; a counterparty's answer that won the race stands.
     */
    async cancelOutgoingTransaction(input: { transactionId: string; reason: string }): Promise<{ status: string; cancelled: boolean }> {
      return cancelTransaction(need(), input.transactionId, input.reason);
    },

    /** POSTs the final status to TRANSFER_CALLBACK_URL; failures are retried by Temporal. */
    async reportTransferStatus(report: TransferReport): Promise<{ delivered: boolean }> {
      return { delivered: await reportTransferStatus(need(), report) };
    },
  };
}

function toCreated(tx: NetworkTransaction): CreatedTransaction {
  return { id: tx.id, status: tx.status ?? 'NEW', transactionType: tx.transactionType, beneficiaryVaspDid: tx.beneficiaryVASPdid, transaction: tx };
}
