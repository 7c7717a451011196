/**
 * Workflow-safe decisions of a deposit from the network's status of its matched message. No I/O, no Node built-ins:
 * the workflow imports this.
 */
import type { DepositDecisionRequest, DepositStatus } from './types';

/**
 * What the deposit becomes for the network's status of its message: RELEASED once the group ACCEPTED the transfer,
 * RETURN_REQUIRED once it DECLINED or REJECTED it, AWAITING_DATA while the message is INCOMPLETE (the originator has
 * not given its data), HELD otherwise (not matched yet, or the incoming transfer is still being screened and answered).
 */
export function depositStatusFor(networkStatus: string | undefined): DepositStatus {
  if (networkStatus === 'ACCEPTED') return 'RELEASED';
  if (networkStatus === 'DECLINED' || networkStatus === 'REJECTED') return 'RETURN_REQUIRED';
  if (networkStatus === 'INCOMPLETE') return 'AWAITING_DATA';
  return 'HELD';
}

/** RELEASED and RETURN_REQUIRED end the decision; RETURNED follows RETURN_REQUIRED once the return is confirmed. */
export const isFinalDepositStatus = (s: DepositStatus): boolean =>
  s === 'RELEASED' || s === 'RETURN_REQUIRED' || s === 'RETURNED';

/**
 * Whether the next check reports the deposit to the network again (tx/notify) rather than reading its message
 * (tx/info): while no message stands for it (none yet, INCOMPLETE, or superseded and CANCELLED) and the match window
 * is open. Reporting again is how a message whose originator added the txHash late is found.
 */
export function notifyAgain(networkStatus: string | undefined, withinWindow: boolean): boolean {
  if (networkStatus === undefined || networkStatus === 'CANCELLED') return true;
  return networkStatus === 'INCOMPLETE' && withinWindow;
}

/** The wait before the next check: doubling from `initialMs` up to `maxMs`. */
export const nextRecheck = (previousMs: number | undefined, initialMs: number, maxMs: number): number =>
  previousMs === undefined ? Math.min(initialMs, maxMs) : Math.min(previousMs * 2, maxMs);

/**
 * Why a compliance officer's decision cannot be taken now, or undefined: "field: rule" for bad input (a 400), any other
 * sentence for a deposit not in a state to decide (a 409). Only HELD, AWAITING_DATA and AWAITING_PROOF are decided.
 */
export function decisionProblem(
  status: DepositStatus,
  pending: DepositDecisionRequest | undefined,
  request: DepositDecisionRequest,
): string | undefined {
  if (request.decision !== 'release' && request.decision !== 'return') return 'decision: must be release or return';
  if (typeof request.reason !== 'string' || request.reason.length < 1 || request.reason.length > 500)
    return 'reason: must be 1 to 500 characters';
  if (isFinalDepositStatus(status)) return `the deposit is already ${status}: it can no longer be decided`;
  if (pending) return `a decision to ${pending.decision} the deposit is already being taken`;
  return undefined;
}

// Business days (Monday to Friday, UTC) for the durable timer of a return's confirmation: a pure function of the time
// it is given, so the workflow computes the same deadline on replay. No holidays: a calendar differs per jurisdiction.
const DAY_MS = 24 * 60 * 60 * 1000;

/** How many business days a return may stay unconfirmed before it escalates (issue 23). */
export const RETURN_CONFIRMATION_BUSINESS_DAYS = 10;

/**
 * `days` business days after `fromMs`, at the same time of day: each step moves one calendar day on and counts only
 * when it lands on a weekday. Friday + 1 is Monday; Saturday or Sunday + 1 is Monday too.
 */
export function addBusinessDays(fromMs: number, days: number): number {
  let at = fromMs;
  for (let counted = 0; counted < days;) {
    at += DAY_MS;
    const weekday = new Date(at).getUTCDay();
    if (weekday !== 0 && weekday !== 6) counted++;
  }
  return at;
}
