/**
 * Workflow-safe types of wallet ownership proofs: what the store keeps, the workflow passes and the API answers.
 * No I/O and no Node built-ins here (the workflow imports it).
 */
import type { Eip712TypedData, SignatureScheme } from './challenge';

export const PROOF_METHODS = ['SIGNATURE', 'SMALL_DEPOSIT', 'SCREENSHOT', 'SELF_DECLARATION'] as const;
export type ProofMethod = (typeof PROOF_METHODS)[number];

export const PROOF_STATUSES = ['PENDING', 'VERIFIED', 'REJECTED', 'EXPIRED'] as const;
export type ProofStatus = (typeof PROOF_STATUSES)[number];

/** What proves ownership: a signature, an observed deposit, or a person's review. Never a key, never personal data. */
export type ProofEvidence =
  | { signature: string }
  | { txHash: string; from: string; amount: string; receivedAt?: string }
  | { reviewedBy: string; decision: 'approve' | 'reject' }
  | Record<string, never>;

export interface WalletProof {
  id: string;
  customerRef: string;
  asset: string;
  address: string;
  vaspDid: string;
  method: ProofMethod;
  /** The signature scheme of a SIGNATURE proof (EIP191, EIP712 for Ethereum; BIP137, BIP322 for Bitcoin). */
  scheme: SignatureScheme | null;
  status: ProofStatus;
  /** Why it is REJECTED or EXPIRED, or why a deposit observed did not verify it (it stays PENDING). */
  reason: string | null;
  nonce: string;
  /** Until when the challenge (or the deposit test, or the review) may complete. */
  challengeExpiresAt: string;
  depositAddress: string | null;
  /** Base units, digits. */
  depositAmount: string | null;
  evidence: ProofEvidence;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  verifiedAt: string | null;
  /** Until when a VERIFIED proof is reused (WALLET_PROOF_VALID_DAYS after verification). */
  expiresAt: string | null;
}

/** What the caller gets to complete the proof: the text or typed data to sign, or where and how much to deposit. */
export type ProofInstructions =
  | { challenge: { message: string; expiresAt: string } | { typedData: Eip712TypedData; expiresAt: string } }
  | { deposit: { address: string; amount: string; asset: string; deadline: string } }
  | { review: { deadline: string } };

/** A status change the workflow writes (through an activity), audited in the same transaction. */
export interface ProofTransition {
  id: string;
  status: ProofStatus;
  reason?: string;
  evidence?: ProofEvidence;
  /** The principal's stable id for a person's decision; a system component's otherwise. */
  actor: string;
  /** Recorded with the audit entry (a person's principal, so the audit row is theirs). */
  principal?: unknown;
  /** For VERIFIED: how long it is reused. */
  validDays?: number;
}

export interface WalletProofInput {
  id: string;
  method: ProofMethod;
  scheme: SignatureScheme | null;
  asset: string;
  address: string;
  /** When the signature or deposit is due, or (for a review) when it escalates: ISO 8601. */
  deadline: string;
  /** Escalation deadline of a person's review (Temporal duration, e.g. `4h`); the review keeps waiting after it. */
  reviewDeadline: string;
  validDays: number;
  depositAmount: string | null;
}

export interface ProofDecision {
  decision: 'approve' | 'reject';
  reason: string;
  actor: string;
  principal: unknown;
}

export interface DepositObserved {
  txHash: string;
  from: string;
  amount: string;
  /**
   * When the API received the report (ISO 8601): the deadline is judged by it, not by when the workflow takes the
   * update, so a worker far behind does not expire a test whose deposit was reported in time. Absent in reports
   * from before it was carried.
   */
  receivedAt?: string;
}

export interface ProofState {
  id: string;
  phase: 'awaiting-signature' | 'awaiting-deposit' | 'awaiting-review' | 'done';
  status: ProofStatus;
  reason?: string;
  escalated: boolean;
}
