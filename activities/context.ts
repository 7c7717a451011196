/**
 * The one place that reads the running activity's context: heartbeats, cancellation, the workflow it runs for. The
 * capabilities get these as plain functions and values the activities pass in. Outside an activity (a test calling an
 * activity function directly) there is no context: these then do nothing or answer undefined.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

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

/** A digest of each running local activity's arguments, set by localCallDigests. */
const callDigests = new WeakMap<Context, string>();

/**
 * The worker's activity interceptor that lets activityIdempotencyKey name a local activity's call. A local activity's
 * id is its sequence number in the run, and its marker is recorded only when the workflow task completes: when that
 * task is retried (its worker died), the same id can come back as a different call, because an earlier local
 * activity's answer (a check of the network) differed. A scheduled activity's id is in the history before it runs.
 */
export const localCallDigests: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute(input, next) {
      if (ctx.info.isLocal) {
        const digest = createHash('sha256').update(JSON.stringify(input.args)).digest('base64url').slice(0, 16);
        callDigests.set(ctx, digest);
      }
      return next(input);
    },
  },
});

/**
 * Names the running activity's attempt-independent identity (workflow id, run id, activity id), so a write it makes can
 * be found again by a retry of the same activity; undefined outside an activity. A local activity's key also names its
 * arguments (localCallDigests): a retried workflow task may issue another call under the same id, whose write must not
 * be taken for the first one's.
 */
export function activityIdempotencyKey(): string | undefined {
  const ctx = current();
  const info = ctx?.info;
  if (!ctx || !info?.workflowExecution) return undefined;
  const key = `${info.workflowExecution.workflowId}/${info.workflowExecution.runId}/${info.activityId}`;
  const digest = info.isLocal ? callDigests.get(ctx) : undefined;
  return digest ? `${key}/${digest}` : key;
}
