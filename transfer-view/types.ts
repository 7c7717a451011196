/**
 * What a workflow tells the console's transfer list at each change of its state (the recordTransferView activity
 * writes it to transfer-view/store.ts; transfer-view/status.ts builds it). Types only; never personal data.
 */
import type { Duration } from '@temporalio/common';

export interface TransferViewUpdate {
  workflowId: string;
  direction: 'incoming' | 'outgoing';
  id: string;
  transactionId?: string;
  reference?: string;
  status: string;
  phase?: string;
  final: boolean;
  needsReview: boolean;
  needsRouting: boolean;
  escalated: boolean;
  subsidiaryDid?: string;
  counterpartyDid?: string;
  asset?: string;
  amount?: string;
  hits?: unknown;
  decision?: unknown;
  /** Who decided the transfer: the policy or screening without a person (`system`), or a person; unset until decided. */
  decidedBy?: 'system' | 'person';
  /** What was decided (incoming: approve/decline; outgoing: the policy's action, or a person's release/refuse). */
  decisionAction?: string;
  /** While a person is awaited: when the wait escalates (or, once escalated, gives up), as a start and a duration. */
  deadline?: { from: string; after: Duration };
  createdAt: string;
  /** Grows with every change of the workflow's state: a write with a lower version changes nothing. */
  version: number;
}

/** Facts about an incoming transfer that its status does not hold: the network's transaction as first read. */
export interface IncomingFacts {
  workflowId: string;
  createdAt: string;
  counterpartyDid?: string;
  amount?: string;
  reference?: string;
  deadline?: { from: string; after: Duration };
}
