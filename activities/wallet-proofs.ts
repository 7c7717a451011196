import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { ConfigError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { checkProofSignature, recordMismatch, transition } from '../wallet-proofs/proofs';
import type { SignatureCheck } from '../wallet-proofs/signature';
import type { ProofEvidence, ProofTransition } from '../wallet-proofs/types';
import { notifyProofWaiters } from '../wallet-proofs/waiters';
import { walletProofVerifiedSignal } from '../workflows/wallet-proof.messages';
import { activityIdempotencyKey } from './context';

/** Wallet ownership proofs (workflows/wallet-proof.ts): the signature check and the status writes. */
export function walletProofActivities(deps: { pool: Pool; temporal?: Pick<Client, 'workflow'>; logger?: Logger }) {
  const wakeWaiters = async (proofId: string) => {
    const temporal = deps.temporal;
    if (!temporal)
      throw new ConfigError(
        'TEMPORAL_ADDRESS',
        'the activities were built without a Temporal client',
        'Start the worker through workers/main.ts',
      );
    return notifyProofWaiters(
      deps.pool,
      async (workflowId) => {
        try {
          await temporal.workflow.getHandle(workflowId).signal(walletProofVerifiedSignal, { proofId });
          return true;
        } catch (e) {
          if (e instanceof WorkflowNotFoundError) return false;
          throw e;
        }
      },
      proofId,
    );
  };
  return {
    /** Verifies the signature over the proof's challenge; a malformed one fails as a ValidationError (not retried). */
    async verifyProofSignature(input: { id: string; signature: string }): Promise<SignatureCheck> {
      return checkProofSignature(deps.pool, input.id, input.signature);
    },

    /**
     * Moves the proof out of PENDING with its audit entry (idempotent: a proof already moved is left). A VERIFIED
     * proof then wakes the workflows waiting for a proof of its wallet (transfers in AWAITING_PROOF): each is
     * signalled (walletProofVerifiedSignal) and its waiter row removed. Done here, in the step the workflow already
     * takes, so the histories recorded before it replay unchanged; a signal that fails is logged, not retried: the
     * proof stands, and each waiter asks the store again on its own timer.
     */
    async finishWalletProof(t: ProofTransition): Promise<void> {
      await transition(deps.pool, t, activityIdempotencyKey());
      if (t.status !== 'VERIFIED') return;
      try {
        await wakeWaiters(t.id);
      } catch (e) {
        deps.logger?.warn(
          { proof: t.id, error: (e as Error).message },
          'the transfers waiting for this wallet proof could not be signalled',
        );
      }
    },

    /** Records why an observed deposit did not verify the proof; it stays PENDING. */
    async recordWalletProofMismatch(input: { id: string; reason: string; evidence: ProofEvidence }): Promise<void> {
      await recordMismatch(deps.pool, input, activityIdempotencyKey());
    },
  };
}
