/**
 * The outgoing transfer's status logic, apart from the workflow that drives it: which update moves the transfer on,
 * which is stale, what the answer deadline makes of a CANCELLED, the history each change leaves, and when the funds may
 * be broadcast (transfer.release or transfer.halt). Workflow-safe:
 * pure functions over the state, no I/O, no clock of their own (the caller passes `now`).
 */
import { isFinalNetworkStatus, isNetworkStatus, networkStatusProgress } from '../lib/network-status';
import type {
  BroadcastDecision,
  BroadcastEvent,
  BroadcastInput,
  BroadcastRule,
  OutgoingReview,
  TransferState,
} from './types';

/**
 * Where the wait for the counterparty's answer stands: the deadline's timer is not started yet (the transaction does
 * not exist), running, or fired.
 */
export type AnswerDeadline = 'not-started' | 'running' | 'passed';

/** What the workflow keeps beside the state to decide on updates: never shown to clients. */
export interface StatusTracking {
  deadline: AnswerDeadline;
  /** A CANCELLED heard while the deadline was running, by its source: a status check settles whose it is. */
  cancelledHeard?: string;
  /** Settled: the network's CANCELLED came before the deadline, so someone else cancelled the transaction. */
  cancelledByOthers: boolean;
  /** The network's `updatedAt` of the newest status applied (ms), when the updates carried one. */
  networkUpdatedAt?: number;
}

export const initialTracking = (): StatusTracking => ({ deadline: 'not-started', cancelledByOthers: false });

/** A status the workflow heard or decided: from the network (webhook, poll, an activity's answer) or its own. */
export interface StatusChange {
  status: string;
  source: string;
  /** The network's `updatedAt` of the transaction with this status, when known. */
  updatedAt?: string;
}

/** The statuses the workflow sets itself, and which end the transfer besides the network's final ones. */
const ENDS_TRANSFER = new Set(['FAILED', 'EXPIRED', 'REFUSED']);

export const isFinalTransferStatus = (status: string): boolean =>
  isFinalNetworkStatus(status) || ENDS_TRANSFER.has(status);

/** The source of an EXPIRED that the network's CANCELLED of the deadline's own cancellation brought. */
export const cancelledAtDeadline = (source: string): string => `deadline: cancelled at the network (${source})`;

/**
 * An update older than the status the transfer holds: the network delivers webhooks concurrently and retries them, so
 * a SENT can arrive after the NOT_READY that followed it. Ordered by the network's `updatedAt` when both have one,
 * else (and on a tie) by how far each status has come. A final status is never stale: nothing follows it; nor is one
 * of the workflow's own (PREPARED, EXPIRED, FAILED), which it sets in order.
 */
export function isStale(
  state: Pick<TransferState, 'status'>,
  tracking: Pick<StatusTracking, 'networkUpdatedAt'>,
  status: string,
  at: number,
): boolean {
  if (isFinalNetworkStatus(status) || !isNetworkStatus(status)) return false;
  const newest = tracking.networkUpdatedAt;
  if (!Number.isNaN(at) && newest !== undefined && at !== newest) return at < newest;
  return networkStatusProgress(status) < networkStatusProgress(state.status);
}

/**
 * Applies a status to the transfer: a history entry at `now`, `final` when it ends the transfer. Returns whether the
 * status changed. Ignored: anything after a final status, a repeat, a stale update. A CANCELLED while the deadline
 * runs is held (`cancelledHeard`) until a status check settles whose it is; after the deadline it is the deadline's own
 * cancellation and ends the transfer EXPIRED. The network's CANCELLED can reach the workflow before the cancel call's
 * answer, even in the activation where the deadline's timer fires (signals are handled first).
 */
export function applyStatus(state: TransferState, tracking: StatusTracking, change: StatusChange, now: Date): boolean {
  let { status, source } = change;
  if (status === 'CANCELLED' && !state.final && tracking.deadline !== 'not-started' && !tracking.cancelledByOthers) {
    if (tracking.deadline === 'running') {
      tracking.cancelledHeard ??= source;
      return false;
    }
    [status, source] = ['EXPIRED', cancelledAtDeadline(source)];
  }
  if (state.final || status === state.status) return false;
  const at = change.updatedAt === undefined ? NaN : Date.parse(change.updatedAt);
  if (isStale(state, tracking, status, at)) return false;
  if (!Number.isNaN(at)) tracking.networkUpdatedAt = Math.max(tracking.networkUpdatedAt ?? at, at);
  state.status = status;
  state.history.push({ status, at: now.toISOString(), source });
  state.final = isFinalTransferStatus(status);
  return true;
}

/**
 * The held CANCELLED, once the network was asked: still before the deadline, it is someone else's cancellation and the
 * transfer ends CANCELLED; past it, the deadline's (the next step ends the transfer EXPIRED).
 */
export function settleCancelled(state: TransferState, tracking: StatusTracking, now: Date): boolean {
  if (tracking.cancelledHeard === undefined || tracking.deadline === 'passed') return false;
  tracking.cancelledByOthers = true;
  return applyStatus(state, tracking, { status: 'CANCELLED', source: tracking.cancelledHeard }, now);
}

/**
 * What the passed deadline calls for: nothing once the transfer is final; EXPIRED at once when the network's CANCELLED
 * (of a cancellation the deadline made before a worker died) was heard; else the transaction is cancelled at the network.
 */
export function atDeadline(
  state: Pick<TransferState, 'final'>,
  tracking: StatusTracking,
): { expire: StatusChange } | 'cancel-at-network' | 'none' {
  if (state.final || tracking.deadline !== 'passed') return 'none';
  if (tracking.cancelledHeard !== undefined)
    return { expire: { status: 'EXPIRED', source: cancelledAtDeadline(tracking.cancelledHeard) } };
  return 'cancel-at-network';
}

/**
 * The outcome of cancelling at the deadline: EXPIRED when the network cancelled it, or the counterparty's final answer
 * when that beat the cancellation; EXPIRED also when the network could not be reached, saying the transaction may
 * still be open there.
 */
export function expiryOutcome(answer: { status: string; cancelled: boolean } | 'unreachable'): StatusChange {
  if (answer === 'unreachable') {
    return {
      status: 'EXPIRED',
      source: 'deadline: not cancelled at the network (unreachable), the transaction may still be open there',
    };
  }
  return answer.cancelled
    ? { status: 'EXPIRED', source: 'deadline: cancelled at the network' }
    : { status: answer.status, source: 'network' };
}

/** Why a person's decision on a held transfer is refused now, or undefined when the workflow takes it. */
export function reviewRequestProblem(state: TransferState, request: OutgoingReview | undefined): string | undefined {
  if (state.status !== 'HELD') return `transfer is not held for review (status ${state.status})`;
  if (request?.decision !== 'release' && request?.decision !== 'refuse') return 'decision: must be release or refuse';
  if (!request.reason?.trim()) return 'reason: is required';
  if (!request.principal?.subject || !request.actor?.trim())
    return 'principal: is required: the authenticated caller who decides';
  return undefined;
}

// When the custody system may broadcast the funds (issue 23 item 5): the rule's types are in types.ts.

/** Transfers started by an API from before the rule: the safe choice, nothing leaves before the answer. */
export const DEFAULT_BROADCAST: BroadcastInput = { rule: { when: 'on-accepted' }, callback: false };

export function ruleLabel(rule: BroadcastRule): string {
  return rule.when === 'after-timeout' ? `after-timeout:${durationLabel(rule.afterMs)}` : rule.when;
}

/**
 * The announcement due now, if any: none when one was made. `timeoutPassed`: the after-timeout rule's timer, started
 * at the transaction's creation, fired.
 */
export function broadcastDue(
  rule: BroadcastRule,
  state: Pick<TransferState, 'status' | 'final' | 'transactionId' | 'broadcast'>,
  timeoutPassed: boolean,
): Omit<BroadcastDecision, 'at'> | undefined {
  if (state.broadcast) return undefined;
  const label = ruleLabel(rule);
  if (state.final)
    return state.status === 'ACCEPTED'
      ? { event: 'transfer.release', reason: 'the beneficiary VASP accepted the transfer', rule: label }
      : { event: 'transfer.halt', reason: `the transfer ended ${state.status}`, rule: label };
  if (!state.transactionId) return undefined;
  if (rule.when === 'at-once')
    return { event: 'transfer.release', reason: 'the Travel Rule data is at the network', rule: label };
  if (rule.when === 'after-timeout' && timeoutPassed)
    return {
      event: 'transfer.release',
      reason: `no final answer within ${durationLabel(rule.afterMs)} of sending the Travel Rule data`,
      rule: label,
    };
  return undefined;
}

function durationLabel(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** What the custody system is told: the transfer's ids, parties' DIDs, asset and amount; no personal data. */
export function broadcastCallbackBody(
  state: Pick<
    TransferState,
    'id' | 'status' | 'originatorVaspDid' | 'beneficiaryVaspDid' | 'asset' | 'amount' | 'transactionId'
  >,
  decision: BroadcastDecision,
): Record<string, unknown> {
  return {
    event: decision.event,
    transferId: state.id,
    vaspDid: state.originatorVaspDid,
    beneficiaryVaspDid: state.beneficiaryVaspDid ?? null,
    asset: state.asset,
    amount: state.amount,
    transactionId: state.transactionId ?? null,
    status: state.status,
    rule: decision.rule,
    reason: decision.reason,
    decidedAt: decision.at,
  };
}

/** One id per transfer and event: a retry is the same message to the receiver. */
export const broadcastWebhookId = (transferId: string, event: BroadcastEvent) =>
  `msg_${transferId}_${event === 'transfer.release' ? 'release' : 'halt'}`;
