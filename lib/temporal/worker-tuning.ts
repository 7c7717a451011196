/**
 * The worker's capacity settings (environment variables in parentheses); a section of config/index.ts, applied by
 * workers/worker.ts through tuningOptions. Unset, each is the Temporal SDK's own default. docs/benchmarks.md ("Worker
 * options, measured") has what each one changed here.
 */
import type { WorkerOptions } from '@temporalio/worker';
import type { Env } from '../config-values';
import { ConfigError } from '../errors';

/** How many long polls a worker keeps open on a task queue: a fixed number, or scaled by the server's hints. */
export type PollerSetting = { fixed: number } | 'autoscaling';

export interface WorkerTuning {
  /** Workflows kept in memory between their tasks (WORKER_MAX_CACHED_WORKFLOWS); unset: the SDK's, by heap size. */
  maxCachedWorkflows?: number;
  /** Workflow tasks run at once (WORKER_MAX_CONCURRENT_WORKFLOW_TASKS); the SDK's default is 40. */
  maxConcurrentWorkflowTasks?: number;
  /** Scheduled activities run at once (WORKER_MAX_CONCURRENT_ACTIVITIES); the SDK's default is 100. */
  maxConcurrentActivities?: number;
  /** Local activities run at once (WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES); the SDK's default is 100. */
  maxConcurrentLocalActivities?: number;
  /** Workflow task polls (WORKER_WORKFLOW_TASK_POLLERS: a count, or `autoscaling`); the SDK's default is 10. */
  workflowTaskPollers?: PollerSetting;
  /** Activity task polls (WORKER_ACTIVITY_TASK_POLLERS: a count, or `autoscaling`); the SDK's default is 10. */
  activityTaskPollers?: PollerSetting;
}

/** A whole number from `min` to `max`, or undefined when unset (the SDK's default, `sdkDefault`, applies). */
function optionalInt(env: Env, name: string, min: number, max: number, sdkDefault: string): number | undefined {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max))
    throw new ConfigError(
      name,
      `"${raw}" is not a whole number from ${min} to ${max}`,
      `Set ${name} within that range, or unset it for the SDK's default (${sdkDefault})`,
    );
  return n;
}

function pollers(env: Env, name: string): PollerSetting | undefined {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return undefined;
  if (raw === 'autoscaling') return raw;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 100)
    throw new ConfigError(
      name,
      `"${raw}" is not a count from 1 to 100 or autoscaling`,
      `Set ${name} to a count of polls or to autoscaling, or unset it for the SDK's default (10)`,
    );
  return { fixed: Number(raw) };
}

export function loadWorkerTuning(env: Env): WorkerTuning {
  const tuning: WorkerTuning = {
    maxCachedWorkflows: optionalInt(env, 'WORKER_MAX_CACHED_WORKFLOWS', 0, 100_000, 'from the heap size'),
    maxConcurrentWorkflowTasks: optionalInt(env, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 2, 10_000, '40'),
    maxConcurrentActivities: optionalInt(env, 'WORKER_MAX_CONCURRENT_ACTIVITIES', 1, 10_000, '100'),
    maxConcurrentLocalActivities: optionalInt(env, 'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', 1, 10_000, '100'),
    workflowTaskPollers: pollers(env, 'WORKER_WORKFLOW_TASK_POLLERS'),
    activityTaskPollers: pollers(env, 'WORKER_ACTIVITY_TASK_POLLERS'),
  };
  const { maxCachedWorkflows: cached, maxConcurrentWorkflowTasks: tasks } = tuning;
  // The SDK would turn a cache of one into two, with a warning.
  if (cached === 1)
    throw new ConfigError(
      'WORKER_MAX_CACHED_WORKFLOWS',
      '1 is not a cache size the SDK runs',
      'Set 0 (no cache: every task replays its history) or at least 2',
    );
  // The SDK would lower it to the cache's size with a warning; a setting that is not what runs is refused instead.
  if (cached !== undefined && cached > 0 && tasks !== undefined && tasks > cached)
    throw new ConfigError(
      'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
      `${tasks} is more than WORKER_MAX_CACHED_WORKFLOWS (${cached})`,
      'A worker runs at most as many workflow tasks at once as it caches workflows: lower it or raise the cache',
    );
  return tuning;
}

const pollerBehavior = (setting: PollerSetting) =>
  setting === 'autoscaling'
    ? { type: 'autoscaling' as const }
    : { type: 'simple-maximum' as const, maximum: setting.fixed };

/** The settings that are set, as the SDK's options (the rest stay the SDK's defaults). */
export function tuningOptions(t: WorkerTuning): Partial<WorkerOptions> {
  return {
    ...(t.maxCachedWorkflows !== undefined && { maxCachedWorkflows: t.maxCachedWorkflows }),
    ...(t.maxConcurrentWorkflowTasks !== undefined && {
      maxConcurrentWorkflowTaskExecutions: t.maxConcurrentWorkflowTasks,
    }),
    ...(t.maxConcurrentActivities !== undefined && { maxConcurrentActivityTaskExecutions: t.maxConcurrentActivities }),
    ...(t.maxConcurrentLocalActivities !== undefined && {
      maxConcurrentLocalActivityExecutions: t.maxConcurrentLocalActivities,
    }),
    ...(t.workflowTaskPollers && { workflowTaskPollerBehavior: pollerBehavior(t.workflowTaskPollers) }),
    ...(t.activityTaskPollers && { activityTaskPollerBehavior: pollerBehavior(t.activityTaskPollers) }),
  };
}
