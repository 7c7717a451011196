import { ConfigError } from '../lib/errors';
import type { TransferContext } from '../outgoing/context';
import { countLeaves, storePii } from '../outgoing/personal-data';
import { planTransfer, type TransferPlan } from '../outgoing/plan';
import { validateOutgoingBody } from '../outgoing/request';
import {
  cancelTransaction,
  createTransaction,
  reportTransferStatus,
  transactionInfo,
  type CreatedTransaction,
  type TransferReport,
} from '../outgoing/transaction';

export type { TransferPlan, PiiMode } from '../outgoing/plan';
export type { CreatedTransaction, TransferReport } from '../outgoing/transaction';

/** Outgoing transfer activities. Each is idempotent: a retry finds what the previous attempt stored. */
export function transferActivities(ctx: TransferContext | undefined) {
  const need = (): TransferContext => {
    if (!ctx) throw new ConfigError('BASE_URL', 'the worker was started without the transfer context (no network configured)', 'Start the worker through workers/main.ts with the network variables set');
    return ctx;
  };
  return {
    /** Validates the stored request, refuses a gateway originator, decides the mode, encrypts and stores the PII. */
    async prepareOutgoingTransfer(input: { id: string }): Promise<{ plan: TransferPlan; piiFields: number }> {
      const c = need();
      const request = await c.store.request(input.id);
      validateOutgoingBody(request.body);
      const plan = await planTransfer(c, request);
      const pii = await storePii(c, input.id, request, plan);
      return { plan, piiFields: pii ? countLeaves(pii.tree) : 0 };
    },

    /** Creates the network's transaction (transactionRef = the transfer id, so a retry never creates two). */
    async createOutgoingTransaction(input: { id: string; plan: TransferPlan }): Promise<CreatedTransaction> {
      const c = need();
      const request = await c.store.request(input.id);
      const row = await c.store.get(input.id);
      const tx = await createTransaction(c, input.id, request, input.plan, row.pii);
      return {
        id: tx.id,
        status: tx.status ?? 'NEW',
        transactionType: tx.transactionType,
        beneficiaryVaspDid: tx.beneficiaryVASPdid,
        transaction: tx,
      };
    },

    /** The fallback when webhooks are lost: the transaction's current status (a poll: low priority in the budget). */
    async fetchOutgoingStatus(input: { transactionId: string }): Promise<{ status: string }> {
      const c = need();
      const tx = await transactionInfo({ ...c, network: c.network.at('low') }, input.transactionId);
      return { status: tx.status ?? 'UNKNOWN' };
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
