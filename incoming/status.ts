/**
 * The incoming transfer's status logic, apart from the workflow that drives it: what a network update changes, which
 * requests of a person the workflow takes in its current phase, what screening holds for review, and the history and
 * audit details each step leaves. Workflow-safe: pure functions over the state, no I/O, no clock of their own (the
 * caller passes `now`).
 */
import { describePrincipal } from '../lib/describe-principal';
import { FINAL_NETWORK_STATUSES, incomingStatusRank } from '../lib/network-status';
import { systemPrincipal } from '../lib/principal';
import type { ScreeningOutcome } from '../screening/types';
import type { PolicyDecision } from '../policy/types';
import type { DecisionRequest, IncomingPhase, IncomingStatus, RouteRequest } from './types';

export const initialIncomingStatus = (transactionId: string): IncomingStatus => ({
  transactionId,
  phase: 'received',
  networkStatus: 'UNKNOWN',
  escalated: false,
  history: [],
});

export const isFinalNetworkStatus = (status: string): boolean => FINAL_NETWORK_STATUSES.has(status);

export function recordEvent(state: IncomingStatus, event: string, now: Date, detail?: Record<string, unknown>): void {
  state.history.push({ at: now.toISOString(), event, detail });
}

export function enterPhase(state: IncomingStatus, phase: IncomingPhase, now: Date): void {
  state.phase = phase;
  recordEvent(state, `phase:${phase}`, now);
}

/**
 * Applies what the network says (a webhook, a poll, an answer to a call). Webhooks may arrive out of order: the status
 * only ever moves forward (incomingStatusRank), and an older one changes nothing. A beneficiary that is one of the
 * group's subsidiaries routes the transfer, when nothing routed it yet (the network redirected it). Returns whether
 * the network status changed.
 */
export function observeNetwork(
  state: IncomingStatus,
  update: { status: string; beneficiaryVaspDid?: string },
  subsidiaryDids: readonly string[],
): boolean {
  if (incomingStatusRank(update.status) < incomingStatusRank(state.networkStatus)) return false;
  const changed = update.status !== state.networkStatus;
  state.networkStatus = update.status;
  const by = update.beneficiaryVaspDid;
  if (by && subsidiaryDids.includes(by) && !state.subsidiaryDid) {
    state.subsidiaryDid = by;
    state.routedBy ??= 'network';
  }
  return changed;
}

/** Why a person's routing is refused now, or undefined when the workflow takes it. */
export function routeRequestProblem(
  state: IncomingStatus,
  request: RouteRequest | undefined,
  subsidiaryDids: readonly string[],
): string | undefined {
  if (state.phase !== 'awaiting-route') return `transfer is not waiting to be routed (phase ${state.phase})`;
  if (!subsidiaryDids.includes(request?.subsidiaryDid as string))
    return `subsidiaryDid: ${String(request?.subsidiaryDid)} is not a subsidiary of the group`;
  if (!request!.reason?.trim()) return 'reason: is required';
  if (!request!.principal?.subject || !request!.actor?.trim())
    return 'principal: is required: the authenticated caller who routes';
  return undefined;
}

/** Why a person's decision is refused now, or undefined when the workflow takes it. */
export function decisionRequestProblem(
  state: IncomingStatus,
  request: DecisionRequest | undefined,
): string | undefined {
  if (state.phase !== 'awaiting-review') return `transfer is not under review (phase ${state.phase})`;
  if (request?.decision !== 'approve' && request?.decision !== 'decline') return 'decision: must be approve or decline';
  if (!request.reason?.trim()) return 'reason: is required';
  if (!request.principal?.subject || !request.actor?.trim())
    return 'principal: is required: the authenticated caller who decides';
  return undefined;
}

/** What holds a transfer for a person: a hit on a list, or personal data that could not be screened. */
export function isScreeningHit(screening: ScreeningOutcome): boolean {
  return (
    screening.nameHits.length > 0 ||
    screening.addressHits.length > 0 ||
    screening.skipped === 'undecryptable' ||
    screening.skipped === 'unreadable'
  );
}

/** Screening's counts for the audit chain: how much was screened and hit, never the customer's data. */
export function screeningCounts(screening: ScreeningOutcome): Record<string, unknown> {
  return {
    screenedNames: screening.screenedNames,
    nameHits: screening.nameHits.length,
    addressHits: screening.addressHits.length,
    ...(screening.skipped ? { skipped: screening.skipped } : {}),
  };
}

/** The lists' entries that matched, for the audit row of a hit: never the customer's data (no matched name). */
export function screeningHitEntries(screening: ScreeningOutcome): Record<string, unknown>[] {
  return [
    ...screening.nameHits.map((h) => ({ list: h.list, entNum: h.entNum, score: h.score })),
    ...screening.addressHits.map((h) => ({ list: h.list, entNum: h.entNum, asset: h.asset })),
  ];
}

/** The decision taken without a person when screening found nothing. */
export const automaticApproval = (): DecisionRequest => ({
  decision: 'approve',
  reason: 'no screening hit',
  actor: 'system:screening',
  principal: systemPrincipal('screening'),
});

/** An approval by the policy: the rule is named in the reason and the audit row. */
export const policyApproval = (decision: PolicyDecision): DecisionRequest => ({
  decision: 'approve',
  reason: decision.reason,
  actor: 'system:policy',
  principal: systemPrincipal('policy'),
});

/**
 * A decline by the policy. The network and the counterparty get a generic reason; which rule declined and why stays
 * in the audit chain.
 */
export const policyDecline = (): DecisionRequest => ({
  decision: 'decline',
  reason: "the transfer does not meet the beneficiary VASP's compliance policy",
  actor: 'system:policy',
  principal: systemPrincipal('policy'),
});

/** The phase a transfer ends in, by its outcome. */
export const finishedPhase = (outcome: string): IncomingPhase => (outcome === 'rejected' ? 'rejected' : 'completed');

/** The outcome once the network answered the decision. */
export const decidedOutcome = (decision: DecisionRequest): string =>
  decision.decision === 'approve' ? 'accepted' : 'declined';

/** The network keeps at most this many characters of a reason. */
export const NETWORK_REASON_MAX = 1024;

/** The reason the network records with a decline: the person's words, then who declined, by name and credential. */
export function networkReason(decision: DecisionRequest): string {
  const by = ` (declined by ${decision.principal ? describePrincipal(decision.principal) : decision.actor})`;
  return decision.reason.slice(0, Math.max(0, NETWORK_REASON_MAX - by.length)) + by;
}
