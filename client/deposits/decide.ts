/**
 * A person's side of a deposit, for the API: a compliance officer's release or return of a held deposit (an update of
 * the deposit's workflow, which validates it and writes the decision), and the custody system's confirmation of a
 * return. Each answers the deposit as the store then holds it.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { confirmReturn, depositOrNotFound } from '../../deposits/deposits';
import { isFinalDepositStatus } from '../../deposits/status';
import type { Deposit } from '../../deposits/types';
import { ConflictError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { depositDecisionUpdate, depositReturnedSignal } from '../../workflows/deposit.messages';
import { executePersonUpdate } from '../person-update';

export async function decideDeposit(
  deps: { pool: Pool; temporal: Client },
  id: string,
  input: { decision: 'release' | 'return'; reason: string },
  principal: Principal,
): Promise<Deposit> {
  const before = await depositOrNotFound(deps.pool, id);
  if (isFinalDepositStatus(before.status))
    throw new ConflictError(`the deposit is already ${before.status}: it can no longer be decided`, { field: 'id' });
  await executePersonUpdate(
    deps.temporal.workflow.getHandle(workflowIds.deposit(id)),
    depositDecisionUpdate,
    { ...input, actor: auditActor(principal), principal },
    {
      closed: (status) => `the deposit's workflow is ${status}: it can no longer be decided`,
      notFound: `no deposit ${id}`,
    },
  );
  return depositOrNotFound(deps.pool, id);
}

/**
 * The custody system sent the required return: RETURNED with its transaction (written and audited here, so a deposit
 * whose workflow ended before returns were awaited is confirmed too), then the workflow is told to stop waiting.
 */
export async function confirmDepositReturn(
  deps: { pool: Pool; temporal: Client },
  id: string,
  txHash: string,
  principal: Principal,
): Promise<Deposit> {
  const deposit = await confirmReturn(deps.pool, { id, txHash }, principal);
  try {
    await deps.temporal.workflow.getHandle(workflowIds.deposit(id)).signal(depositReturnedSignal);
  } catch (e) {
    // The run ended already: decided before returns were awaited, or escalated. RETURNED is written all the same.
    if (!(e instanceof WorkflowNotFoundError)) throw e;
  }
  return deposit;
}
