import type { Pool } from 'pg';
import { awaitDepositProof, checkDeposit, transitionDeposit } from '../deposits/deposits';
import type { DepositMatch, DepositTransition } from '../deposits/types';
import type { NetworkClient } from '../network/client';
import { activityIdempotencyKey } from './context';

/** Deposits the custody system reported (workflows/deposit.ts): the network checks and the audited status writes. */
export function depositActivities(deps: { pool: Pool; network: NetworkClient; gatewayDid?: string }) {
  return {
    /** The network's message the deposit belongs to: reported again (tx/notify) or read (tx/info). */
    async checkDeposit(input: { id: string; notify: boolean }): Promise<DepositMatch> {
      return checkDeposit(deps, input);
    },

    /** The deposit's status or match, with its audit entry (idempotent: a final deposit is left as it is). */
    async transitionDeposit(t: DepositTransition): Promise<void> {
      await transitionDeposit(deps.pool, t, activityIdempotencyKey());
    },

    /**
     * A deposit waiting for the customer's proof of its self-hosted sending wallet: registers the workflow as a waiter
     * and answers the usable proof's id, if any; with `stop`, removes the waiter.
     */
    async awaitDepositProof(input: { id: string; workflowId: string; stop?: boolean }): Promise<{ proofId?: string }> {
      return awaitDepositProof(deps.pool, input);
    },
  };
}
