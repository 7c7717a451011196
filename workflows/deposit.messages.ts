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
