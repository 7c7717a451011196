/**
 * Starting a key rotation and reading where it stands, for the API: the request is audited before the workflow
 * starts, and the answer waits (bounded) for the workflow to confirm the VASP in the network's directory.
 */
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Pool } from 'pg';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type AppError,
} from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import { VaspDid } from '../../lib/temporal/search-attributes';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { keyRotation } from '../../workflows';
import {
  keyRotationAcceptedUpdate,
  keyRotationStatusQuery,
  type KeyRotationStatus,
} from '../../workflows/key-rotation.messages';
import { recordStartRequest } from '../audited-start';

export interface KeyRotationStartDeps {
  temporal: Client;
  pool: Pool;
  taskQueue: string;
}

/** How long a start waits for the workflow to confirm the VASP in the directory before answering anyway. */
const ACCEPT_WAIT_MS = 15_000;

/** The network's error, reported by the workflow, as this API's error class. */
function fromWorkflowFailure(e: WorkflowUpdateFailedError, vaspDid: string): AppError {
  const cause = e.cause instanceof ApplicationFailure ? e.cause : undefined;
  const message = cause?.message ?? e.message;
  const details = { field: 'vaspDID', networkError: cause?.type };
  switch (cause?.type) {
    case 'NotFoundError':
      return new NotFoundError(`VASP ${vaspDid} is not in the network's directory (${message})`, {
        ...details,
        rule: 'must be a VASP the network knows',
      });
    case 'ForbiddenError':
      return new ForbiddenError(message, details);
    case 'UpstreamUnavailableError':
      return new UpstreamUnavailableError(message, details);
    default:
      return new UpstreamRejectedError(message, details);
  }
}

const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

/**
 * Audits the request, starts the VASP's rotation and waits (at most ACCEPT_WAIT_MS) for the workflow to accept it:
 * 409 while a rotation of the VASP runs, 404 for a VASP the network does not know, 503 when the audit row cannot be
 * written (then nothing starts).
 */
export async function startKeyRotation(
  deps: KeyRotationStartDeps,
  input: { vaspDid: string; reason: string; principal: Principal },
  log: { error: (details: object, message: string) => void },
): Promise<{ workflowId: string; runId: string; vaspDID: string; step: string; status: string }> {
  const { vaspDid, reason, principal } = input;
  const workflowId = workflowIds.keyRotation(vaspDid);
  const running = () =>
    new ConflictError(
      `a key rotation for ${vaspDid} is already running (workflow ${workflowId}); wait for it to finish`,
      {
        field: 'vaspDID',
        rule: 'one rotation per VASP at a time',
        workflowId,
      },
    );
  // Refused before it is recorded when a rotation is visibly running; the start below still decides a race.
  if (
    await deps.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        (d) => d.status.name === 'RUNNING',
        () => false,
      )
  )
    throw running();
  // The request is in the audit log before anything starts, and nothing starts when it cannot be written there.
  await recordStartRequest(deps.pool, log, {
    actor: auditActor(principal),
    action: 'key.rotation.requested',
    subject: vaspDid,
    details: { reason, workflowId, principal },
  });
  const start = new WithStartWorkflowOperation(keyRotation, {
    workflowId,
    taskQueue: deps.taskQueue,
    args: [{ vaspDid, reason, requestedBy: auditActor(principal), principal }],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
    typedSearchAttributes: [{ key: VaspDid, value: vaspDid }],
  });
  const accepted = deps.temporal.workflow.executeUpdateWithStart(keyRotationAcceptedUpdate, {
    startWorkflowOperation: start,
  });
  accepted.catch(() => undefined); // awaited below; this only keeps a late failure from going unhandled
  let handle;
  try {
    handle = await start.workflowHandle();
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw running();
    throw e;
  }
  // The with-start handle does not carry the run id: read it back (the run was just created, so it is the first).
  const { runId } = await handle.describe();
  let status: KeyRotationStatus | 'timeout';
  try {
    status = await Promise.race([accepted, timeout(ACCEPT_WAIT_MS)]);
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) throw fromWorkflowFailure(e, vaspDid);
    throw e;
  }
  return {
    workflowId,
    runId,
    vaspDID: vaspDid,
    step: status === 'timeout' ? 'verifying-vasp' : status.step,
    status: status === 'timeout' ? 'Started; waiting for a worker to check the VASP in the directory' : status.status,
  };
}

/** The current or last rotation of the VASP: its workflow's status and, when a worker answers the query, its step. */
export async function keyRotationState(deps: { temporal: Client }, vaspDid: string) {
  const workflowId = workflowIds.keyRotation(vaspDid);
  const handle = deps.temporal.workflow.getHandle(workflowId);
  let description;
  try {
    description = await handle.describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError)
      throw new NotFoundError(`no key rotation of ${vaspDid} has run`, { field: 'vaspDID' });
    throw e;
  }
  const base = { workflowId, runId: description.runId, workflowStatus: description.status.name };
  try {
    return { ...base, ...(await handle.query(keyRotationStatusQuery)) };
  } catch {
    // A closed workflow is queried by replaying it on a worker; without one, the status alone still helps.
    return base;
  }
}
