import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DecisionRequest, IncomingStatus, RouteRequest, TransactionUpdate } from '../incoming/types';

/**
 * The incoming-transfer workflow's messages, defined once and shared by the workflow, the webhook receiver and the
 * internal API.
 */

export type {
  TransactionUpdate,
  Acting,
  RouteRequest,
  DecisionRequest,
  IncomingPhase,
  IncomingHistoryEntry,
  IncomingStatus,
} from '../incoming/types';
export type { ScreeningOutcome } from '../screening/types';

export const transactionUpdatedSignal = defineSignal<[TransactionUpdate]>('transactionUpdated');
export const routeUpdate = defineUpdate<IncomingStatus, [RouteRequest]>('route');
export const decideUpdate = defineUpdate<IncomingStatus, [DecisionRequest]>('decide');
export const incomingStatusQuery = defineQuery<IncomingStatus>('status');
