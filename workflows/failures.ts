/**
 * The one way workflows read a failed activity: an activity's error reaches the workflow as an ActivityFailure whose
 * `cause` is what the activity threw (an ApplicationFailure with the typed error's name, message and details; see
 * activities/failures.ts) or why it never finished (a TimeoutFailure, a CancelledFailure).
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** What the activity threw or why it stopped; any other error as it is. */
export function activityCause(e: unknown): unknown {
  return e instanceof ActivityFailure && e.cause ? e.cause : e;
}

export interface FailureSummary {
  type: string;
  message: string;
  /** An ApplicationFailure's details (activities put the typed error's fields there), else empty. */
  details: unknown[];
}

/** The failure's type, message and details, through the activity's wrapper. */
export function summarizeFailure(e: unknown): FailureSummary {
  const cause = activityCause(e);
  if (cause instanceof ApplicationFailure)
    return { type: cause.type ?? 'ApplicationFailure', message: cause.message, details: cause.details ?? [] };
  return { type: (cause as Error)?.name ?? 'Error', message: (cause as Error)?.message ?? String(cause), details: [] };
}
