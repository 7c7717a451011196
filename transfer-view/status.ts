/**
 * The console's transfer list entry (transfer-view/types.ts) built from a workflow's own state, so the workflows only
 * decide *when* to write it. Workflow-safe: types and pure functions, no I/O; never personal data.
 */
import type { IncomingFacts, TransferViewUpdate } from './types';
import type { IncomingStatus } from '../incoming/types';
import type { TransferState } from '../outgoing/types';

export type { IncomingFacts, TransferViewUpdate } from './types';

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
    hits: state.screening
      ? {
          nameHits: state.screening.nameHits,
          addressHits: state.screening.addressHits,
          skipped: state.screening.skipped,
        }
      : undefined,
    decision: state.decision,
    ...incomingDecider(state),
    deadline: waiting ? facts.deadline : undefined,
    createdAt: facts.createdAt,
    version: state.history.length,
  };
}

/** Who decided an incoming transfer: the policy or screening (`system:*` actors) or a person; nothing before a decision. */
function incomingDecider(state: IncomingStatus): Pick<TransferViewUpdate, 'decidedBy' | 'decisionAction'> {
  if (!state.decision) return {};
  return {
    decidedBy: state.decision.actor.startsWith('system:') ? 'system' : 'person',
    decisionAction: state.decision.decision,
  };
}

/**
 * Who decided an outgoing transfer: a person who released or refused it, else the policy unless it sent the
 * transfer to a person (then nothing until that person decides). Transfers from before policies decided nothing.
 */
function outgoingDecider(state: TransferState): Pick<TransferViewUpdate, 'decidedBy' | 'decisionAction'> {
  if (state.review) return { decidedBy: 'person', decisionAction: state.review.decision };
  if (state.policy && state.policy.action !== 'SEND_TO_INBOX') {
    return { decidedBy: 'system', decisionAction: state.policy.action };
  }
  return {};
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
    // Held by the outgoing policy: in the review queue until a person releases or refuses it.
    needsReview: state.status === 'HELD',
    needsRouting: false,
    escalated: false,
    subsidiaryDid: state.originatorVaspDid,
    counterpartyDid: state.beneficiaryVaspDid,
    asset: state.asset,
    amount: state.amount,
    ...outgoingDecider(state),
    createdAt: state.history[0]?.at ?? new Date().toISOString(),
    version: state.history.length,
  };
}

/**
 * The entry once the send step created the transaction, from the workflow's entry before it: the workflow's state
 * after PREPARED and the network's first status. The send step writes it itself, saving a local activity; the workflow
 * compares it with its own state afterwards and writes again if they differ (a webhook that got in first).
 */
export function outgoingViewAfterSend(
  before: TransferViewUpdate,
  plan: { beneficiaryVaspDid?: string },
  created: { id: string; status: string; beneficiaryVaspDid?: string },
  final: boolean,
): TransferViewUpdate {
  return {
    ...before,
    transactionId: created.id,
    status: created.status,
    final,
    needsReview: false,
    counterpartyDid: created.beneficiaryVaspDid ?? plan.beneficiaryVaspDid,
    version: before.version + 2,
  };
}
