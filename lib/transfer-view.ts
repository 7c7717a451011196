/**
 * What a workflow tells the console's transfer list at each change of its state (the recordTransferView activity
 * writes it to db/transfer-view.ts). Built from the workflow's own state by the two functions below, so the workflows
 * only decide *when* to write. Workflow-safe: types and pure functions, no I/O; never personal data.
 */
import type { Duration } from '@temporalio/common';
import type { IncomingStatus } from '../workflows/incoming-transfer.messages';
import type { TransferState } from '../workflows/outgoing-transfer.messages';

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

const FINAL_PHASES = new Set(['completed', 'rejected']);

export function incomingViewUpdate(state: IncomingStatus, facts: IncomingFacts): TransferViewUpdate {
  const waiting = state.phase === 'awaiting-review' || state.phase === 'awaiting-route';
  return {
    workflowId: facts.workflowId,
    direction: 'incoming',
    id: state.transactionId,
    transactionId: state.transactionId,
    reference: facts.reference,
    status: state.networkStatus,
    phase: state.phase,
    final: FINAL_PHASES.has(state.phase),
    needsReview: state.phase === 'awaiting-review',
    needsRouting: state.phase === 'awaiting-route',
    escalated: state.escalated,
    subsidiaryDid: state.subsidiaryDid,
    counterpartyDid: facts.counterpartyDid,
    asset: state.asset,
    amount: facts.amount,
    hits: state.screening ? { nameHits: state.screening.nameHits, addressHits: state.screening.addressHits, skipped: state.screening.skipped } : undefined,
    decision: state.decision,
    deadline: waiting ? facts.deadline : undefined,
    createdAt: facts.createdAt,
    version: state.history.length,
  };
}

export function outgoingViewUpdate(state: TransferState): TransferViewUpdate {
  return {
    workflowId: state.workflowId,
    direction: 'outgoing',
    id: state.id,
    transactionId: state.transactionId,
    reference: state.id,
    status: state.status,
    final: state.final,
    needsReview: false,
    needsRouting: false,
    escalated: false,
    subsidiaryDid: state.originatorVaspDid,
    counterpartyDid: state.beneficiaryVaspDid,
    asset: state.asset,
    amount: state.amount,
    createdAt: state.history[0]?.at ?? new Date().toISOString(),
    version: state.history.length,
  };
}
