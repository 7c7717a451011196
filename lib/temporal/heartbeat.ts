/**
 * The one way code reaches the running activity's context: heartbeats from long steps, cancellation, the workflow it
 * runs for. The steps are also called outside an activity (the benchmarks' and tests' direct calls), where there is
 * no activity context: there these do nothing or answer undefined.
 */
import { Context } from '@temporalio/activity';

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Records progress, so a step that is alive is not taken for a dead worker. */
export function heartbeat(details?: unknown): void {
  current()?.heartbeat(details);
}

/** Whether the running activity was cancelled (false outside an activity). */
export function cancelled(): boolean {
  return current()?.cancellationSignal.aborted ?? false;
}

/** The running activity's workflow id, if any. */
export function activityWorkflowId(): string | undefined {
  return current()?.info.workflowExecution?.workflowId;
}

/** The running activity's workflow run id, if any. */
export function activityRunId(): string | undefined {
  return current()?.info.workflowExecution?.runId;
}

/**
 * Names the running activity's attempt-independent identity (workflow id, run id, activity id), so a write it makes can
 * be found again by a retry of the same activity; undefined outside an activity.
 */
export function activityIdempotencyKey(): string | undefined {
  const info = current()?.info;
  if (!info?.workflowExecution) return undefined;
  return `${info.workflowExecution.workflowId}/${info.workflowExecution.runId}/${info.activityId}`;
}

/** Heartbeats every 10 s while `fn` runs: one long SQL statement (a diff over millions of rows) is not a dead worker. */
export async function withHeartbeat<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat({ [what]: 'in progress' }), 10_000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
