/**
 * A compliance officer's release or return of a held deposit, for the API: an update of the deposit's workflow
 * (workflows/deposit.ts validates it and writes the decision), answered with the deposit as the store then holds it.
 */
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { depositOrNotFound } from '../../deposits/deposits';
import { isFinalDepositStatus } from '../../deposits/status';
import type { Deposit } from '../../deposits/types';
import { ConflictError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { depositDecisionUpdate } from '../../workflows/deposit.messages';
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
