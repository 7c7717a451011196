/**
 * Starting a reconciliation of a subsidiary's address book and reading where it stands, for the API: the request is
 * audited before the workflow starts, and a run whose workflow is gone no longer blocks the VASP.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { closeAbandoned } from '../../address-book/run';
import { runningRunWithWorkflow } from '../../address-book/store/runs';
import type { ReconcileMode } from '../../address-book/types';
import { ConflictError, NotFoundError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { workflowStatusOf } from '../../lib/temporal/workflow-status';
import { addressBookReconcile } from '../../workflows';
import { addressBookProgressQuery } from '../../workflows/address-book-reconcile';
import { recordStartRequest } from '../audited-start';

export interface ReconcileStartDeps {
  temporal: Client;
  pool: Pool;
  taskQueue: string;
}

/**
 * 409 when a run of the VASP is in progress. A run recorded as running whose workflow is gone (terminated by an
 * operator, say) no longer holds the VASP: it is closed as failed so it cannot block every later run.
 */
async function assertNoRunningRun(deps: { temporal: Client; pool: Pool }, vaspDid: string): Promise<void> {
  const running = await runningRunWithWorkflow(deps.pool, vaspDid);
  if (!running) return;
  const status = await workflowStatusOf(deps.temporal)(running.workflow_id);
  if (status === 'RUNNING') {
    throw new ConflictError(`a reconciliation of ${vaspDid} is already running (run ${running.run_id})`, {
      field: 'vaspDID',
      runId: running.run_id,
      workflowId: running.workflow_id,
    });
  }
  await closeAbandoned(
    deps,
    { run_id: running.run_id, vasp_did: vaspDid },
    `abandoned: its workflow ${running.workflow_id} is ${status}`,
  );
}

/** Audits the request, then starts the VASP's reconciliation; 409 while one runs, 503 when the audit row cannot be written. */
export async function startReconciliation(
  deps: ReconcileStartDeps,
  input: {
    vaspDid: string;
    trigger: 'api' | 'cli';
    mode: Extract<ReconcileMode, 'auto' | 'full'>;
    principal: Principal;
  },
  log: { error: (details: object, message: string) => void },
): Promise<{ workflowId: string; runId: string }> {
  const { vaspDid, trigger, mode, principal } = input;
  await assertNoRunningRun(deps, vaspDid);
  const workflowId = workflowIds.addressBookReconcile(vaspDid);
  // The request is in the audit log before the run starts, and no run starts when it cannot be written there.
  await recordStartRequest(deps.pool, log, {
    actor: auditActor(principal),
    action: 'address-book.reconcile.requested',
    subject: vaspDid,
    details: { trigger, mode, workflowId, principal },
  });
  try {
    const handle = await deps.temporal.workflow.start(addressBookReconcile, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [{ vaspDid, trigger, mode }],
    });
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ConflictError(`a reconciliation of ${vaspDid} is already running`, { field: 'vaspDID', workflowId });
    }
    throw e;
  }
}

/** A reconciliation's progress while it runs, its report once it completed, or the error it ended with. */
export async function reconciliationState(
  deps: { temporal: Client },
  workflowId: string,
): Promise<{
  workflowId: string;
  status: string;
  progress?: object;
  report?: object;
  error?: string;
}> {
  const handle = deps.temporal.workflow.getHandle<typeof addressBookReconcile>(workflowId);
  try {
    const { status } = await handle.describe();
    if (status.name === 'RUNNING')
      return { workflowId, status: status.name, progress: await handle.query(addressBookProgressQuery) };
    if (status.name === 'COMPLETED') return { workflowId, status: status.name, report: await handle.result() };
    const error = await handle.result().then(
      () => undefined,
      (e: Error & { cause?: Error }) => e.cause?.message ?? e.message,
    );
    return { workflowId, status: status.name, error };
  } catch (e) {
    if (e instanceof WorkflowNotFoundError)
      throw new NotFoundError(`no reconciliation ${workflowId}`, { field: 'workflowId' });
    throw e;
  }
}
