/**
 * The outgoing transfer's messages, defined once and shared by the workflow and its clients (the API, the webhook
 * route, the agent routes, tests): the signal the network's updates arrive through, the status query, and the update
 * the agent-compatible `/tx/create` waits on until the network's transaction exists.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CreatedTransaction, OutgoingReview, TransactionUpdate, TransferState } from '../outgoing/types';

export type {
  TransactionUpdate,
  TransferHistoryEntry,
  LocalStatus,
  TransferState,
  OutgoingReview,
} from '../outgoing/types';
export { initialState } from '../outgoing/types';

export const transactionUpdatedSignal = defineSignal<[TransactionUpdate]>('transactionUpdated');
export const transferStatusQuery = defineQuery<TransferState>('transferStatus');
/** Resolves once the network's transaction exists (or the transfer failed before that): the agent answers with it. */
export const transactionCreatedUpdate = defineUpdate<
  CreatedTransaction | { error: NonNullable<TransferState['error']> }
>('transactionCreated');
/** A person's decision on a transfer the policy held (status HELD): release it to be sent, or refuse it. */
export const reviewOutgoingUpdate = defineUpdate<TransferState, [OutgoingReview]>('review');
