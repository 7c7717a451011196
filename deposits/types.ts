/**
 * Workflow-safe types of deposits the custody system reports: what the store keeps, the workflow passes and the API
 * answers. No I/O and no Node built-ins here (the workflow imports it). No personal data: addresses, amounts, hashes.
 */
import type { Principal } from '../lib/principal';

/**
 * HELD: reported, not yet matched to Travel Rule data (or matched and not yet answered); AWAITING_DATA: the network's
 * message for it is INCOMPLETE, waiting for the originator's data; AWAITING_PROOF: from a self-hosted wallet above the
 * subsidiary's proof threshold, waiting for the customer's VERIFIED ownership proof of the sending wallet; RELEASED: the custody system may credit it;
 * RETURN_REQUIRED: the funds must go back (declined, rejected, no data or proof before the deadline, or an officer's
 * decision); RETURNED: the custody system confirmed the return's transaction (POST /v1/deposits/:id/returned).
 */
export const DEPOSIT_STATUSES = [
  'HELD',
  'AWAITING_DATA',
  'AWAITING_PROOF',
  'RELEASED',
  'RETURN_REQUIRED',
  'RETURNED',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
export type FinalDepositStatus = Extract<DepositStatus, 'RELEASED' | 'RETURN_REQUIRED' | 'RETURNED'>;

/** The subsidiary's jurisdiction's reading of the amount at intake (jurisdictions/classify.ts). */
export type DepositClassification = 'BELOW_THRESHOLD' | 'TRAVELRULE' | 'UNKNOWN';

export interface Deposit {
  id: string;
  vaspDid: string;
  chain: string;
  asset: string;
  txHash: string;
  outputIndex: number;
  to: string;
  from: string | null;
  /** The receiving customer (an opaque reference), whose ownership proof of `from` a self-hosted deposit needs. */
  customerRef: string | null;
  /**
   * From a self-hosted wallet above the subsidiary's proof threshold (decided at intake): released by the customer's
   * VERIFIED proof of `from`, not by Travel Rule data.
   */
  proofRequired: boolean;
  /** Base units, digits. */
  amount: string;
  status: DepositStatus;
  reason: string | null;
  classification: DepositClassification;
  /** The network's transaction the deposit is matched to. */
  transactionId: string | null;
  networkStatus: string | null;
  /**
   * When the originator's data must have arrived: the report's time plus the subsidiary's deadline, counted again from
   * the network's INCOMPLETE message once it asks the originator (a self-hosted wallet's proof keeps the report's).
   */
  dataDeadlineAt: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  decidedAt: string | null;
  /** Who made the deposit final: a compliance officer's actor (oidc:…, apikey:…), or system:deposit. */
  decidedBy: string | null;
  /** The return's transaction, as the custody system confirmed it (lower case), and when. */
  returnTxHash: string | null;
  returnedAt: string | null;
  /** When a return not confirmed within 10 business days was escalated. */
  escalatedAt: string | null;
}

/** What the workflow starts with; the durations are the configuration's at intake (a running workflow keeps them). */
export interface DepositInput {
  id: string;
  vaspDid: string;
  classification: DepositClassification;
  /**
   * ISO 8601: an INCOMPLETE match not completed by then requires a return. With `dataDeadlineMs`, the report's
   * deadline only until the network's INCOMPLETE message asks the originator: the wait counts from then.
   */
  dataDeadlineAt: string;
  /**
   * How long the originator has once the network's INCOMPLETE message asks it for its data (the subsidiary's
   * DEPOSIT_DATA_DEADLINE): the deadline counts from that message, not from the report, so time the report spent
   * reaching a network that was down or rate-limiting is not taken from the originator. Absent on deposits reported
   * before it (their histories keep the report's deadline).
   */
  dataDeadlineMs?: number;
  /** How long the deposit is reported to the network again while nothing or an INCOMPLETE message matches it. */
  matchWindowMs: number;
  /** The first wait between checks, doubled after each up to `recheckMaxMs`. */
  recheckInitialMs: number;
  recheckMaxMs: number;
  /**
   * Waits for the customer's ownership proof of the sending self-hosted wallet instead of the network's message.
   * Absent on deposits reported before proofs were asked for (their histories take the network path).
   */
  proofRequired?: boolean;
  /**
   * How long a required return waits for its confirmation before it escalates; absent: 10 business days from the
   * decision (deposits/status.ts). Set short by tests.
   */
  returnConfirmationMs?: number;
  /**
   * What the receiving subsidiary's jurisdiction does with a deposit whose originator's data did not arrive by the
   * deadline (DEPOSIT_DEADLINE_ACTION): require its return, hold it for a compliance officer's decision, or release it.
   * Absent on deposits reported before it was chosen: a return, as then.
   */
  deadlineAction?: DepositDeadlineAction;
  /**
   * False when no custody callback URL is configured: the decision is not called back (the custody system reads
   * GET /v1/deposits/:id), and no activity runs for it. Absent on deposits reported before it: called as then (the
   * activity does nothing without a URL).
   */
  custodyCallbacks?: boolean;
  /** Checks per run before the workflow continues as new (default 500); set low by tests. */
  checksPerRun?: number;
  /** Where the previous run stopped, when this run continues it. */
  resumed?: {
    state: DepositState;
    matchUntil: number;
    waitMs?: number;
    reviewing?: boolean;
    /** The data deadline in epoch ms, once counted from the originator's request (absent before that). */
    deadline?: number;
  };
}

export const DEPOSIT_DEADLINE_ACTIONS = ['return', 'review', 'release'] as const;
export type DepositDeadlineAction = (typeof DEPOSIT_DEADLINE_ACTIONS)[number];

/** The network's message a deposit belongs to, as a check reads it. */
export interface DepositMatch {
  transactionId: string;
  networkStatus: string;
  /**
   * Epoch ms when the network gave this answer: an INCOMPLETE message's first answer is when the originator was asked,
   * which starts the data deadline. The workflow's own clock can lag it by the check's local retries. Absent from
   * checks recorded before it.
   */
  checkedAt?: number;
}

/** A change the workflow writes (through an activity), audited in the same transaction. */
export interface DepositTransition {
  id: string;
  status: DepositStatus;
  reason?: string;
  match?: DepositMatch;
  /** The ownership proof that released a self-hosted deposit (audited). */
  proofId?: string;
  /** ISO 8601: the data deadline, counted again from the originator's request when the network first asked for it. */
  dataDeadlineAt?: string;
  actor: string;
  /** A compliance officer's decision that made the deposit final (audited with its principal). */
  decision?: DepositDecisionRequest;
}

/**
 * A compliance officer's decision on a deposit not final yet (HELD, AWAITING_DATA, AWAITING_PROOF), sent to its
 * workflow as an update: `release` makes it RELEASED, `return` RETURN_REQUIRED, with the reason and the officer's
 * identity written and audited.
 */
export interface DepositDecisionRequest {
  decision: 'release' | 'return';
  reason: string;
  /** The officer's audit actor (lib/principal.ts auditActor). */
  actor: string;
  principal?: Principal;
}

export interface DepositState {
  id: string;
  status: DepositStatus;
  transactionId?: string;
  networkStatus?: string;
  reason?: string;
  /** Who made it final (absent while it is not, and in states of runs from before decisions were recorded). */
  decidedBy?: string;
  /** The required return was not confirmed in time and was escalated. */
  escalated?: boolean;
}
