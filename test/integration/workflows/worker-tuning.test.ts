import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Activities } from '../../../activities';
import { loadConfig } from '../../../config';
import { workflowIds } from '../../../lib/temporal/workflow-ids';
import { deposit } from '../../../workflows/deposit';
import type { DepositInput } from '../../../workflows/deposit.messages';
import { createWorker } from '../../../workers/worker';
import { testEnv } from '../../harness/platform';
import { workflowTestEnvironment } from '../../harness/workflow-env';

/**
 * The WORKER_* settings (lib/temporal/worker-tuning.ts) reach the SDK through the project's createWorker: a worker on
 * the run's real Temporal server starts with each of them, and a workflow completes on it.
 */
describe('a worker with capacity settings, on the real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  it('runs with each setting as configured and completes a workflow', async () => {
    const { worker: tuning } = loadConfig({
      WORKER_MAX_CACHED_WORKFLOWS: '20',
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '4',
      WORKER_MAX_CONCURRENT_ACTIVITIES: '5',
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '3',
      WORKER_WORKFLOW_TASK_POLLERS: '2',
      WORKER_ACTIVITY_TASK_POLLERS: 'autoscaling',
    });
    const taskQueue = `wf-tuning-${randomBytes(6).toString('hex')}`;
    const released: string[] = [];
    const worker = await createWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      keyring: testEnv().keyring,
      workflowBundlePath: testEnv().workflowBundle,
      activities: {
        transitionDeposit: async (t: { status: string }) => void released.push(t.status),
        deliverCustodyCallback: async () => ({ delivered: true }),
      } as unknown as Activities,
      tuning,
    });
    expect(worker.options).toMatchObject({
      maxCachedWorkflows: 20,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
      activityTaskPollerBehavior: { type: 'autoscaling' },
      tuner: {
        workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: 4 },
        activityTaskSlotSupplier: { type: 'fixed-size', numSlots: 5 },
        localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 3 },
      },
    });
    // A deposit below the threshold: RELEASED at once by one local activity, nothing asked of the network.
    const input: DepositInput = {
      id: `dep-${randomBytes(6).toString('hex')}`,
      vaspDid: 'did:ethr:0x00000000000000000000000000000000000000aa',
      classification: 'BELOW_THRESHOLD',
      dataDeadlineAt: new Date(Date.now() + 3_600_000).toISOString(),
      matchWindowMs: 3_600_000,
      recheckInitialMs: 100,
      recheckMaxMs: 300,
      returnConfirmationMs: 100,
    };
    const result = await worker.runUntil(
      env.client.workflow.execute(deposit, { taskQueue, workflowId: workflowIds.deposit(input.id), args: [input] }),
    );
    expect(result).toMatchObject({ status: 'RELEASED' });
    expect(released).toEqual(['RELEASED']);
  });
});
