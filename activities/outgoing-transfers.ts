import { ConfigError } from '../lib/errors';
import type { TransferViewUpdate } from '../transfer-view/types';
import type { TransferContext } from '../outgoing/context';
import type { TransferPlan } from '../outgoing/plan';
import {
  awaitBeneficiaryProof,
  cancelTransaction,
  finishOutgoingTransfer,
  outgoingStatus,
  sendOutgoingTransfer,
  type AwaitingProof,
  type HeldTransfer,
  type SentTransfer,
  type TransferReport,
} from '../outgoing/transaction';
import type { DecideDeps } from '../policy/decide';
import type { TransferFactsInput } from '../policy/types';

export type { TransferPlan, PiiMode } from '../outgoing/plan';
export type {
  AwaitingProof,
  CreatedTransaction,
  HeldTransfer,
  SentTransfer,
  TransferReport,
} from '../outgoing/transaction';

/** Outgoing transfer activities: the steps in outgoing/transaction.ts. Each is idempotent: a retry finds what the previous attempt stored. */
export function transferActivities(ctx: TransferContext | undefined, policy?: DecideDeps) {
  const need = (): TransferContext => {
    if (!ctx)
      throw new ConfigError(
        'BASE_URL',
        'the worker was started without the transfer context (no network configured)',
        'Start the worker through workers/main.ts with the network variables set',
      );
    return ctx;
  };
  return {
    /**
     * Decides by the outgoing policy (with `decide`), plans (unless the API's plan is given), stores the personal
     * data, creates the transaction, writes its list entry. A transfer the policy does not approve is not sent.
     */
    async sendOutgoingTransfer(input: {
      id: string;
      plan?: TransferPlan;
      view?: TransferViewUpdate;
      decide?: TransferFactsInput;
    }): Promise<SentTransfer | HeldTransfer | AwaitingProof> {
      return sendOutgoingTransfer(need(), input, policy);
    },

    /**
     * A transfer in AWAITING_PROOF: registers the workflow as a waiter of the beneficiary wallet's proof and answers
     * whether the customer's VERIFIED proof is there; with `stop`, removes the waiter.
     */
    async awaitBeneficiaryProof(input: {
      id: string;
      workflowId: string;
      stop?: boolean;
    }): Promise<{ verified: boolean }> {
      return awaitBeneficiaryProof(need(), input);
    },

    /** The final list entry, then the report to TRANSFER_CALLBACK_URL (failures retried by Temporal). */
    async finishOutgoingTransfer(input: {
      view?: TransferViewUpdate;
      report?: TransferReport;
    }): Promise<{ viewWritten: boolean; delivered: boolean }> {
      return finishOutgoingTransfer(need(), input);
    },

    /** The fallback when webhooks are lost: the transaction's current status. */
    async fetchOutgoingStatus(input: { transactionId: string }): Promise<{ status: string; updatedAt?: string }> {
      return outgoingStatus(need(), input.transactionId);
    },

    /**
     * Withdraws a transaction whose counterparty did not answer before the deadline, so that it cannot accept it (and
     * expect the funds) after the originator has given up; a counterparty's answer that won the race stands.
     */
    async cancelOutgoingTransaction(input: {
      transactionId: string;
      reason: string;
    }): Promise<{ status: string; cancelled: boolean }> {
      return cancelTransaction(need(), input.transactionId, input.reason);
    },
  };
}
