import type { Pool } from 'pg';
import { awaitDepositProof, checkDeposit, escalateReturn, transitionDeposit } from '../deposits/deposits';
import { deliverDepositCallback, type CustodyEvent } from '../deposits/custody-callback';
import type { DepositMatch, DepositTransition } from '../deposits/types';
import type { NetworkClient } from '../network/client';
import { activityIdempotencyKey } from './context';

/** Deposits the custody system reported (workflows/deposit.ts): the network checks and the audited status writes. */
export function depositActivities(deps: {
  pool: Pool;
  network: NetworkClient;
  gatewayDid?: string;
  /** CUSTODY_CALLBACK_URL and its secret; absent: no callbacks. */
  custody?: { url?: string; secret?: string };
}) {
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

    /** `deposit.release` or `deposit.return` to the custody system, signed; throws (retried) until it answers 2xx. */
    async deliverCustodyCallback(input: { id: string; event: CustodyEvent }): Promise<{ delivered: boolean }> {
      return deliverDepositCallback({ pool: deps.pool, ...deps.custody }, input, activityIdempotencyKey());
    },

    /** A return not confirmed by its deadline: escalated and audited, once. */
    async escalateReturn(input: { id: string; deadline: string }): Promise<{ escalated: boolean }> {
      return escalateReturn(deps.pool, input, activityIdempotencyKey());
    },
  };
}
