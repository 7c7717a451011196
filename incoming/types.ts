/**
 * What the incoming-transfer workflow, the webhook receiver and the internal API exchange about an incoming transfer.
 * Workflow-safe: types only, never personal data.
 */
import type { Principal } from '../lib/principal';
import type { ScreeningOutcome } from '../screening/types';
import type { PolicyDecision, TransferDecision } from '../policy/types';

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

export interface IncomingStatus {
  transactionId: string;
  phase: IncomingPhase;
  networkStatus: string;
  asset?: string;
  subsidiaryDid?: string;
  routedBy?: 'network' | 'registry' | 'person';
  escalated: boolean;
  screening?: ScreeningOutcome;
  /** The policy's decision after screening: the version, the rule matched and why. */
  policy?: PolicyDecision;
  decision?: DecisionRequest & { at: string };
  history: IncomingHistoryEntry[];
}

/** Screening's result with the policy's decision on it (absent in histories from before policies). */
export type ScreenedTransfer = ScreeningOutcome & { policy?: TransferDecision };

/** What the internal systems are told (TRANSFER_CALLBACK_URL) when an incoming transfer ends or needs a person. */
export interface IncomingOutcomeReport {
  transactionId: string;
  outcome: string;
  networkStatus: string;
  subsidiaryDid: string | null;
}
