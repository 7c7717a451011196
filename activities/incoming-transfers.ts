import type { Pool } from 'pg';
import { recordAuditEntry, type AuditEntry } from '../audit/store';
import { activityIdempotencyKey } from './context';
import type { NetworkClient } from '../network/client';
import { findAddressOwner, recordRoutedAddress } from '../incoming/routing';
import { finishIncomingTransfer, reportIncomingOutcome } from '../incoming/outcome';
import type { Logger } from '../lib/logger';
import type { TransferViewUpdate } from '../transfer-view/types';
import type { ScreeningDeps, ScreeningInput } from '../screening/screen-transfer';
import { screenAndDecide } from '../incoming/screen-and-decide';
import type { DecideDeps } from '../policy/decide';
import type { TransferFactsInput } from '../policy/types';
import {
  acceptIncoming,
  confirmIncoming,
  declineIncoming,
  incomingTransaction,
  markIncomingNotReady,
  redirectIncoming,
  rejectIncoming,
  type IncomingTxSummary,
} from '../incoming/transaction';
import { listUnansweredIncoming, type UnansweredIncomingQuery } from '../incoming/sweep';
import type { IncomingOutcomeReport, ScreenedTransfer } from '../incoming/types';

export type { IncomingTxSummary } from '../incoming/transaction';

export interface IncomingDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  decrypt: ScreeningDeps['decrypt'];
  callbackUrl?: string;
  /** The policy's sources; without them screening alone decides (a hit → a person, else accept). */
  decide?: DecideDeps;
}

/** The incoming transfer's steps: routing, the group's answers at the network, screening, audit and the callback. */
export function incomingActivities(deps: IncomingDeps) {
  return {
    /** `poll`: the wait's fallback for lost webhooks, low priority in the group's network budget. */
    async getIncomingTransaction(transactionId: string, how?: { poll?: boolean }): Promise<IncomingTxSummary> {
      return incomingTransaction(deps.network, transactionId, how);
    },

    async findAddressOwner(input: {
      asset: string;
      address: string;
      subsidiaryDids: string[];
    }): Promise<string | null> {
      return findAddressOwner(deps.pool, input);
    },

    async redirectIncomingTransaction(input: { transactionId: string; to: string }): Promise<IncomingTxSummary> {
      return redirectIncoming(deps.network, input.transactionId, input.to);
    },

    async confirmIncomingTransaction(transactionId: string): Promise<IncomingTxSummary> {
      return confirmIncoming(deps.network, transactionId);
    },

    async acceptIncomingTransaction(transactionId: string): Promise<IncomingTxSummary> {
      return acceptIncoming(deps.network, transactionId);
    },

    async declineIncomingTransaction(input: { transactionId: string; reason: string }): Promise<IncomingTxSummary> {
      return declineIncoming(deps.network, input.transactionId, input.reason);
    },

    async rejectIncomingTransaction(input: { transactionId: string; reason: string }): Promise<IncomingTxSummary> {
      return rejectIncoming(deps.network, input.transactionId, input.reason);
    },

    /**
     * Screens the originator's names and origin address and decides by the policy; returns the hits and the decision
     * only (see incoming/screen-and-decide.ts).
     */
    async screenIncomingTransfer(input: ScreeningInput & { transfer?: TransferFactsInput }): Promise<ScreenedTransfer> {
      return screenAndDecide(deps, input);
    },

    async markIncomingNotReady(transactionId: string): Promise<IncomingTxSummary> {
      return markIncomingNotReady(deps.network, transactionId);
    },

    /** The address a person routed joins the group's registry (see incoming/routing.ts). */
    async recordRoutedAddress(input: {
      asset: string;
      destination: string;
      subsidiaryDid: string;
      transactionId: string;
    }): Promise<'recorded' | 'skipped'> {
      return recordRoutedAddress(deps.pool, input);
    },

    /** Appends to the audit chain; a retry (or a replay of the local activity) finds its row instead of adding one. */
    async recordAudit(input: AuditEntry): Promise<void> {
      await recordAuditEntry(deps.pool, input, { idempotencyKey: activityIdempotencyKey() });
    },

    /** Tells the internal systems (TRANSFER_CALLBACK_URL) that an incoming transfer needs a person, or how it ended. */
    async reportIncomingOutcome(report: IncomingOutcomeReport): Promise<void> {
      await reportIncomingOutcome(deps.callbackUrl, report);
    },

    /** The final list entry, then the outcome report (a failed report is retried by Temporal). */
    async finishIncomingTransfer(input: {
      view: TransferViewUpdate;
      report: IncomingOutcomeReport;
    }): Promise<{ viewWritten: boolean }> {
      return finishIncomingTransfer(deps, input);
    },
  };
}

/** The sweep's look at the network for incoming transactions no webhook started (see incoming/sweep.ts). */
export function incomingSweepActivities(deps: { network: NetworkClient }) {
  return {
    async listUnansweredIncoming(query: UnansweredIncomingQuery): Promise<string[]> {
      return listUnansweredIncoming(deps.network.at('low'), query);
    },
  };
}
