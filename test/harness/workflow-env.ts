import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { createDataConverter } from '../../lib/temporal/data-converter';
import { createWorker } from '../../workers/worker';
import { timestampMs } from './history';
import { testEnv } from './platform';

/**
 * Workflow tests in the manner of Temporal's samples: the workflow under test runs on the run's real Temporal dev
 * server, in the project's own worker (its bundle, its encrypting data converter), with stubbed activities. The
 * activities are the Temporal adapter's boundary, so stubbing them tests the workflow alone: which activities it calls,
 * with what, when its timers fire and what it returns.
 *
 * The dev server does not skip time (the time-skipping test server is a binary the SDK downloads, and this machine
 * cannot download it), so these tests pass short durations and read the timers' configured durations and their
 * start and fire times from the workflow's history.
 */
export async function workflowTestEnvironment(): Promise<TestWorkflowEnvironment> {
  const env = testEnv();
  return TestWorkflowEnvironment.createFromExistingServer({
    address: env.temporalAddress,
    client: { dataConverter: createDataConverter(env.keyring) },
  });
}

/** One activity call as a stub saw it. */
export interface StubCall {
  name: string;
  args: unknown[];
  /** Wall-clock time of the call (the dev server's clock is the same machine's). */
  at: number;
}

export type Stubs = Partial<{ [K in keyof Activities]: (...args: Parameters<Activities[K]>) => unknown }>;

/**
 * A worker on a fresh task queue (or the given one: a second worker taking over a workflow) with the given stubs as its
 * activities; each call is recorded in `calls`. A call to an activity without a stub fails as unregistered and is
 * retried as the workflow's policy says, so the test fails on its assertions or its timeout.
 */
export async function stubWorker(
  env: TestWorkflowEnvironment,
  stubs: Stubs,
  queue?: string,
): Promise<{ worker: Worker; taskQueue: string; calls: StubCall[] }> {
  const calls: StubCall[] = [];
  const activities: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(stubs)) {
    activities[name] = async (...args: unknown[]) => {
      calls.push({ name, args, at: Date.now() });
      return (fn as (...a: unknown[]) => unknown)(...args);
    };
  }
  const taskQueue = queue ?? `wf-test-${randomBytes(6).toString('hex')}`;
  const { keyring, workflowBundle } = testEnv();
  const worker = await createWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    keyring,
    workflowBundlePath: workflowBundle,
    activities: activities as unknown as Activities,
  });
  return { worker, taskQueue, calls };
}

export const callsOf = (calls: StubCall[], name: keyof Activities) => calls.filter((c) => c.name === name);

/**
 * Runs one workflow to its end on a stub worker (stubWorker): its result, its history's events and the stubs' calls.
 * The workflow id is `<prefix>-<random>` unless given.
 */
export async function runWithStubs<A extends unknown[], R>(
  env: TestWorkflowEnvironment,
  workflow: (...args: A) => Promise<R>,
  args: A,
  stubs: Stubs,
  workflowId = `${workflow.name}-${randomBytes(6).toString('hex')}`,
): Promise<{ result: R; events: HistoryEvent[]; calls: StubCall[] }> {
  const { worker, taskQueue, calls } = await stubWorker(env, stubs);
  const { result, events } = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(workflow, { taskQueue, workflowId, args });
    return { result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
  });
  return { result, events, calls };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A protobuf Timestamp or Duration in whole milliseconds (seconds may be a Long). */
export const ms = (t: Parameters<typeof timestampMs>[0]) => Math.round(timestampMs(t));

/** A timer of the history: its configured duration, when it started, and when it fired (undefined if cancelled). */
export interface HistoryTimer {
  durationMs: number;
  startedAt: number;
  firedAt?: number;
  cancelled: boolean;
}

/** Every timer the workflow started (durable timers only: `condition` timeouts and `sleep`), in order. */
export function timersOf(events: HistoryEvent[]): HistoryTimer[] {
  const byId = new Map<string, HistoryTimer>();
  for (const e of events) {
    const started = e.timerStartedEventAttributes;
    if (started?.timerId) {
      byId.set(started.timerId, {
        durationMs: ms(started.startToFireTimeout),
        startedAt: ms(e.eventTime),
        cancelled: false,
      });
    }
    const fired = e.timerFiredEventAttributes;
    if (fired?.timerId) byId.get(fired.timerId)!.firedAt = ms(e.eventTime);
    const cancelled = e.timerCanceledEventAttributes;
    if (cancelled?.timerId) byId.get(cancelled.timerId)!.cancelled = true;
  }
  return [...byId.values()];
}

/** The type of each activity the workflow scheduled (local activities are markers, not these), in order. */
export const scheduledActivities = (events: HistoryEvent[]) =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

/** When the workflow's first workflow task started: its clock's reading in that task (local activities do not move it). */
export const firstTaskStartedAt = (events: HistoryEvent[]) =>
  ms(events.find((e) => e.workflowTaskStartedEventAttributes)?.eventTime);

/** Runs `fn` while the worker polls, and stops the worker afterwards whatever happened. */
export async function whileRunning<T>(worker: Worker, fn: () => Promise<T>): Promise<T> {
  return worker.runUntil(fn);
}
