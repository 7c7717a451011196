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

/** Each running local activity's arguments, kept by localCallDigests, and their digest once a key asked for it. */
const callArgs = new WeakMap<Context, unknown[]>();
const callDigests = new WeakMap<Context, string>();

/** The digest of the local activity's arguments as it received them: computed once, when a key first needs it. */
function callDigest(ctx: Context): string | undefined {
  const known = callDigests.get(ctx);
  if (known !== undefined) return known;
  const args = callArgs.get(ctx);
  if (!args) return undefined;
  const digest = createHash('sha256').update(JSON.stringify(args)).digest('base64url').slice(0, 16);
  callDigests.set(ctx, digest);
  return digest;
}

/**
 * The worker's activity interceptor that lets activityIdempotencyKey name a local activity's call. A local activity's
 * id is its sequence number in the run, and its marker is recorded only when the workflow task completes: when that
 * task is retried (its worker died), the same id can come back as a different call, because an earlier local
 * activity's answer (a check of the network) differed. A scheduled activity's id is in the history before it runs.
 * The arguments are kept by reference and hashed only by a call that asks for a key (most local activities do not);
 * the activities ask before they use their input, so the digest is of the arguments as received.
 */
export const localCallDigests: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute(input, next) {
      if (ctx.info.isLocal) {
        callArgs.set(ctx, input.args);
        callDigests.delete(ctx);
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
  const digest = info.isLocal ? callDigest(ctx) : undefined;
  return digest ? `${key}/${digest}` : key;
}
