import type { Pool } from 'pg';
import { checkProofSignature, recordMismatch, transition } from '../wallet-proofs/proofs';
import type { SignatureCheck } from '../wallet-proofs/signature';
import type { ProofEvidence, ProofTransition } from '../wallet-proofs/types';
import { activityIdempotencyKey } from './context';

/** Wallet ownership proofs (workflows/wallet-proof.ts): the signature check and the status writes. */
export function walletProofActivities(deps: { pool: Pool }) {
  return {
    /** Verifies the signature over the proof's challenge; a malformed one fails as a ValidationError (not retried). */
    async verifyProofSignature(input: { id: string; signature: string }): Promise<SignatureCheck> {
      return checkProofSignature(deps.pool, input.id, input.signature);
    },

    /** Moves the proof out of PENDING with its audit entry (idempotent: a proof already moved is left). */
    async finishWalletProof(t: ProofTransition): Promise<void> {
      await transition(deps.pool, t, activityIdempotencyKey());
    },

    /** Records why an observed deposit did not verify the proof; it stays PENDING. */
    async recordWalletProofMismatch(input: { id: string; reason: string; evidence: ProofEvidence }): Promise<void> {
      await recordMismatch(deps.pool, input, activityIdempotencyKey());
    },
  };
}
