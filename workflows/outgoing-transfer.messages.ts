/**
 * The outgoing transfer's messages, defined once and shared by the workflow and its clients (the API, the webhook
 * route, the agent routes, tests): the signal the network's updates arrive through, the status query, and the update
 * the agent-compatible `/tx/create` waits on until the network's transaction exists.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CreatedTransaction } from '../activities/outgoing-transfers';
import type { OutgoingTransferInput } from './outgoing-transfer';

export interface TransactionUpdate {
  /** The network's transaction id: an update for another transaction is ignored. */
  transactionId: string;
  status: string;
  /** Where it came from: `webhook` (with its delivery id) or `poll`. */
  source: string;
  webhookId?: string;
  /** The transaction's `updatedAt` at the network, when the update carried it: orders updates that arrive out of order. */
  updatedAt?: string;
}

export interface TransferHistoryEntry {
  status: string;
  at: string;
  source: string;
}

/** The transfer's own statuses around the network's: before the transaction exists, and when the wait ends. */
export type LocalStatus = 'RECEIVED' | 'PREPARED' | 'FAILED' | 'EXPIRED';

export interface TransferState {
  id: string;
  workflowId: string;
  /** The network's status (NEW, SENT, ACK, ACCEPTED, …) once created, else a LocalStatus. */
  status: string;
  final: boolean;
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  asset: string;
  amount: string;
  mode?: string;
  transactionId?: string;
  error?: { type: string; message: string; field?: string; rule?: string };
  history: TransferHistoryEntry[];
}

export const transactionUpdatedSignal = defineSignal<[TransactionUpdate]>('transactionUpdated');
export const transferStatusQuery = defineQuery<TransferState>('transferStatus');
/** Resolves once the network's transaction exists (or the transfer failed before that): the agent answers with it. */
export const transactionCreatedUpdate = defineUpdate<CreatedTransaction | { error: NonNullable<TransferState['error']> }>('transactionCreated');

/** The state before anything happened: what the workflow starts from and what the API answers a new request with. */
export function initialState(input: OutgoingTransferInput, workflowId: string, at: Date): TransferState {
  return {
    id: input.id,
    workflowId,
    status: 'RECEIVED',
    final: false,
    originatorVaspDid: input.originatorVaspDid,
    beneficiaryVaspDid: input.beneficiaryVaspDid,
    asset: input.asset,
    amount: input.amount,
    history: [{ status: 'RECEIVED', at: at.toISOString(), source: 'request' }],
  };
}
