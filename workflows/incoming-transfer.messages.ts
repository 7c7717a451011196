import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Principal } from '../lib/principal';

/**
 * The incoming-transfer workflow's messages, defined once and shared by the workflow, the webhook receiver and the
 * internal API.
 */

/** What a notification webhook (or a poll) says about the transaction: never personal data. */
export interface TransactionUpdate {
  status: string;
  beneficiaryVaspDid?: string;
  /** Where the update came from: the network's webhook or the workflow's own poll. */
  source: 'webhook' | 'poll';
}

/**
 * Who acts on a transfer: the caller the API authenticated (never a name from a request body), and that principal's
 * stable id as `actor` (lib/principal.ts auditActor; the name is the principal's, for display). Histories recorded
 * before principals existed carry `actor` alone, and those before actors were stable ids a name.
 */
export interface Acting {
  principal?: Principal;
  actor: string;
}

export interface RouteRequest extends Acting {
  /** The group subsidiary that owns the destination address. */
  subsidiaryDid: string;
  reason: string;
}

export interface DecisionRequest extends Acting {
  decision: 'approve' | 'decline';
  reason: string;
}

export type IncomingPhase =
  | 'received'
  | 'routing'
  | 'awaiting-route'
  | 'confirming'
  | 'awaiting-ack'
  | 'screening'
  | 'awaiting-review'
  | 'deciding'
  | 'completed'
  | 'rejected';

export interface IncomingHistoryEntry {
  at: string;
  event: string;
  detail?: Record<string, unknown>;
}

export interface ScreeningOutcome {
  screenedNames: number;
  nameHits: { list: string; entNum: number; matchedName: string; score: number }[];
  addressHits: { list: string; asset: string; entNum: number | null }[];
  /**
   * Why names were not screened; `undecryptable` (no key of ours opens it) and `unreadable` (it opens but does not
   * parse) hold the transfer for a person like a hit does.
   */
  skipped?: 'screened-by-network' | 'no-personal-data' | 'undecryptable' | 'unreadable';
  /** For `undecryptable`/`unreadable` when an error says why: its kind and rule, free of personal data. */
  unreadableReason?: string;
}

export interface IncomingStatus {
  transactionId: string;
  phase: IncomingPhase;
  networkStatus: string;
  asset?: string;
  subsidiaryDid?: string;
  routedBy?: 'network' | 'registry' | 'person';
  escalated: boolean;
  screening?: ScreeningOutcome;
  decision?: DecisionRequest & { at: string };
  history: IncomingHistoryEntry[];
}

export const transactionUpdatedSignal = defineSignal<[TransactionUpdate]>('transactionUpdated');
export const routeUpdate = defineUpdate<IncomingStatus, [RouteRequest]>('route');
export const decideUpdate = defineUpdate<IncomingStatus, [DecisionRequest]>('decide');
export const incomingStatusQuery = defineQuery<IncomingStatus>('status');
