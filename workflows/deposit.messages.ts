import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DepositDecisionRequest, DepositState } from '../deposits/types';

/** The deposit workflow's messages, shared by the workflow and its callers. */

export type { DepositDecisionRequest, DepositInput, DepositState } from '../deposits/types';

export const depositStateQuery = defineQuery<DepositState>('depositState');
/**
 * A compliance officer's release or return of a deposit not final yet; answers the state once the workflow wrote the
 * decision. Refused (the validator) when the deposit is final or another decision is being taken.
 */
export const depositDecisionUpdate = defineUpdate<DepositState, [DepositDecisionRequest]>('decide');
/**
 * The custody system confirmed the required return (POST /v1/deposits/:id/returned wrote RETURNED): the workflow stops
 * waiting for it, and no escalation follows.
 */
export const depositReturnedSignal = defineSignal('depositReturned');
/**
 * The network's message the deposit matched reached a final status (the notification webhook saw it): the workflow
 * checks at once instead of at the end of its recheck wait, which stays the fallback when no webhook comes.
 */
export const depositMatchMovedSignal = defineSignal('depositMatchMoved');
