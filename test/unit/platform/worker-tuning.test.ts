import { loadConfig } from '../../../config';
import { ConfigError } from '../../../lib/errors';
import { tuningOptions } from '../../../lib/temporal/worker-tuning';

describe('the worker capacity settings (WORKER_*)', () => {
  it("leaves every option to the SDK's defaults when nothing is set", () => {
    const { worker } = loadConfig({});
    expect(tuningOptions(worker)).toEqual({});
  });

  it('passes what is set to the SDK under its own option names', () => {
    const { worker } = loadConfig({
      WORKER_MAX_CACHED_WORKFLOWS: '500',
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20',
      WORKER_MAX_CONCURRENT_ACTIVITIES: '30',
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '40',
      WORKER_WORKFLOW_TASK_POLLERS: '2',
      WORKER_ACTIVITY_TASK_POLLERS: 'autoscaling',
    });
    expect(tuningOptions(worker)).toEqual({
      maxCachedWorkflows: 500,
      maxConcurrentWorkflowTaskExecutions: 20,
      maxConcurrentActivityTaskExecutions: 30,
      maxConcurrentLocalActivityExecutions: 40,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
      activityTaskPollerBehavior: { type: 'autoscaling' },
    });
    expect(tuningOptions(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).worker)).toEqual({ maxCachedWorkflows: 0 });
  });

  it.each([
    [{ WORKER_WORKFLOW_TASK_POLLERS: '0' }, /^WORKER_WORKFLOW_TASK_POLLERS: "0" is not a count from 1 to 100/],
    [{ WORKER_ACTIVITY_TASK_POLLERS: 'many' }, /^WORKER_ACTIVITY_TASK_POLLERS: "many" is not a count/],
    [
      { WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1' },
      /^WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: "1" is not a whole number from 2/,
    ],
    [{ WORKER_MAX_CACHED_WORKFLOWS: '-1' }, /^WORKER_MAX_CACHED_WORKFLOWS: "-1" is not a whole number from 0/],
    [{ WORKER_MAX_CACHED_WORKFLOWS: '1' }, /^WORKER_MAX_CACHED_WORKFLOWS: 1 is not a cache size the SDK runs/],
    [
      { WORKER_MAX_CACHED_WORKFLOWS: '10', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20' },
      /^WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: 20 is more than WORKER_MAX_CACHED_WORKFLOWS \(10\)/,
    ],
  ])('refuses %j with one ConfigError line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
