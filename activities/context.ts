/**
 * The one place that reads the running activity's context: heartbeats, cancellation, the workflow it runs for. The
 * capabilities get these as plain functions and values the activities pass in. Outside an activity (a test calling an
 * activity function directly) there is no context: these then do nothing or answer undefined.
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
export function heartbeat(details?: Record<string, unknown>): void {
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
