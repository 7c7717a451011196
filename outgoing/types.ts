/**
 * What the outgoing-transfer workflow, its activities and its clients exchange, and the state a transfer starts from.
 * Workflow-safe: types and pure functions, never personal data.
 */
export type { CreatedTransaction } from './transaction';
import type { TransferPlan } from './plan';
import type { Acting } from '../incoming/types';
import type { PolicyDecision } from '../policy/types';

/** Everything the workflow gets: a reference to the sealed request and non-personal metadata. */
export interface OutgoingTransferInput {
  /** The transfer id (idempotency key; the network's transactionRef). The request is read from the database by it. */
  id: string;
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  asset: string;
  amount: string;
  /** How long to wait for the counterparty's final answer after the transaction is created. */
  answerDeadlineMs: number;
  /** Interval of the `GET /tx/info` fallback while no webhook arrives. */
  pollIntervalMs: number;
  /** Whether a callback URL is configured (the activity reads the URL itself). */
  report: boolean;
  /**
   * What the API decided when it checked the request (outgoing/checks.ts): DIDs, the mode and the recipients' public
   * keys, no personal data. The worker follows it instead of validating and asking the directory again; a transfer
   * started without one (by an API from before) is planned in the worker.
   */
  plan?: TransferPlan;
  /** When the custody system may broadcast the funds (BroadcastRule below); absent: started by an API from before. */
  broadcast?: BroadcastInput;
}

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

/**
 * The transfer's own statuses around the network's: before the transaction exists (HELD: the policy wants a person
 * first; AWAITING_PROOF: the self-hosted beneficiary wallet's ownership proof is required and not VERIFIED yet), and
 * how it ends without the network (REFUSED: by the policy or by that person; EXPIRED: also no proof before the
 * deadline).
 */
export type LocalStatus = 'RECEIVED' | 'PREPARED' | 'HELD' | 'AWAITING_PROOF' | 'REFUSED' | 'FAILED' | 'EXPIRED';

/** A person's decision on a transfer the policy held. */
export interface OutgoingReview extends Acting {
  decision: 'release' | 'refuse';
  reason: string;
}

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
  /** The policy's decision before sending: the version, the rule matched and why. */
  policy?: PolicyDecision;
  /** The person's decision on a held transfer. */
  review?: OutgoingReview & { at: string };
  /** The one `transfer.release` or `transfer.halt` the custody system was told, once due. */
  broadcast?: BroadcastDecision;
  history: TransferHistoryEntry[];
}

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

/**
 * When the custody system may broadcast an outgoing transfer's funds (issue 23 item 5): the sending subsidiary's rule,
 * and the one announcement each transfer ends with, `transfer.release` (broadcast) or `transfer.halt` (do not).
 * Its decision is outgoing/status.ts's broadcastDue.
 *
 * - `on-accepted`: released when the beneficiary VASP accepts; halted when the transfer ends any other way.
 * - `at-once`: released as soon as the network holds the Travel Rule data (the transaction is created), without
 *   waiting for the answer; halted when the transfer ends before that (refused by the policy or a person, failed, no
 *   ownership proof).
 * - `after-timeout`: released on ACCEPTED, or when no final answer came within `afterMs` of the transaction's creation;
 *   halted when the transfer ends otherwise before that.
 * A transfer held for a person or waiting for a wallet's proof announces nothing until that is decided. Once released,
 * a later rejection changes nothing: the funds may have left; the transfer's status and audit say what followed.
 */

export const BROADCAST_RULES = ['on-accepted', 'at-once', 'after-timeout'] as const;

export type BroadcastRule = { when: 'on-accepted' } | { when: 'at-once' } | { when: 'after-timeout'; afterMs: number };

export type BroadcastEvent = 'transfer.release' | 'transfer.halt';

/** What the workflow is started with: the subsidiary's rule, and whether a custody callback URL is configured. */
export interface BroadcastInput {
  rule: BroadcastRule;
  callback: boolean;
}

/** The announcement made, in the transfer's state (GET /v1/transfers/:id). */
export interface BroadcastDecision {
  event: BroadcastEvent;
  reason: string;
  /** The rule it followed, as configured: `on-accepted`, `at-once`, `after-timeout:10m`. */
  rule: string;
  at: string;
}
