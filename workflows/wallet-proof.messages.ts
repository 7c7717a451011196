import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DepositObserved, ProofDecision, ProofState } from '../wallet-proofs/types';

/** The wallet-proof workflow's messages, shared by the workflow and the API (client/wallet-proofs). */

export type { DepositObserved, ProofDecision, ProofState, WalletProofInput } from '../wallet-proofs/types';

/** The wallet's signature over the challenge: verified at once; wrong → REJECTED, malformed → the update fails (400). */
export const submitSignatureUpdate = defineUpdate<ProofState, [{ signature: string }]>('submitSignature');
/** The custody system saw a deposit to the test's address: the right sender and exact amount → VERIFIED. */
export const depositObservedUpdate = defineUpdate<ProofState, [DepositObserved]>('depositObserved');
/** A compliance officer's decision on a screenshot or self-declaration. */
export const reviewProofUpdate = defineUpdate<ProofState, [ProofDecision]>('reviewProof');
export const proofStateQuery = defineQuery<ProofState>('proofState');
/**
 * Sent to each workflow waiting for a proof of a wallet (wallet_proof_waiters, by asset and address) when a proof of
 * that wallet is VERIFIED: the waiter re-checks the store for a proof it can use (its customer's). No personal data.
 */
export const walletProofVerifiedSignal = defineSignal<[{ proofId: string }]>('walletProofVerified');
