import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import { addressBookActivities } from '../../activities/address-book';
import { withFailureMapping } from '../../activities/failures';
import { NetworkClient } from '../../network/client';
import { ValidationError } from '../../lib/errors';
import { addressBookReconcile } from '../../workflows';
import { addressBookTestSettings } from '../harness/address-book';
import {
  groupSeed,
  quietLogger,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

jest.setTimeout(120_000);

/**
 * A run id names the run's staging tables (partition names and bounds), where no query parameter can stand, and it
 * comes from workflow input: anyone who can start a workflow chooses it. Anything but a UUID is refused at the
 * activity boundary, before a single statement reaches the database.
 */
describe('address book: a run id that is not a UUID never reaches SQL', () => {
  const group = groupSeed();
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;
  const canary = `canary_${randomUUID().replace(/-/g, '')}`;
  const injected = `${randomUUID()}'); drop table ${canary}; --`;

  beforeAll(async () => {
    sandbox = await startSandbox(group.seed);
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA] },
      addressBook: addressBookTestSettings(),
    });
    await orch.pool.query(`create table ${canary} (x int)`);
  });
  afterAll(async () => {
    await orch?.pool.query(`drop table if exists ${canary}`);
    await orch?.close();
    await sandbox?.close();
  });

  const canaryExists = async () =>
    (await orch.pool.query<{ t: string | null }>('select to_regclass($1)::text as t', [canary])).rows[0]!.t !== null;

  it('every activity refuses it with a non-retryable ValidationError naming runId, and runs no statement', async () => {
    // The pool records every statement and connection; the activities get it in place of the real one.
    const seen: string[] = [];
    const counting = new Proxy(orch.pool, {
      get(target, prop, receiver) {
        if (prop === 'query' || prop === 'connect') {
          return (...args: unknown[]) => {
            seen.push(String(prop));
            return (Reflect.get(target, prop, target) as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    }) as Pool;
    const activities = withFailureMapping(
      addressBookActivities({
        pool: counting,
        network: new NetworkClient(sandbox.networkConfig(group.gatewayUser)),
        logger: quietLogger(),
        addressBook: addressBookTestSettings(),
      }),
    );
    const base = { runId: injected, vaspDid: group.subA };
    const calls: [string, () => Promise<unknown>][] = [
      ['abBeginRun', () => activities.abBeginRun({ ...base, workflowId: 'w', trigger: 'test' })],
      ['abListNetwork', () => activities.abListNetwork(base)],
      ['abComputeHead', () => activities.abComputeHead(base)],
      ['abComputeDelta', () => activities.abComputeDelta(base)],
      ['abBuildMirror', () => activities.abBuildMirror(base)],
      ['abApplyRemovals', () => activities.abApplyRemovals(base)],
      ['abRegisterAdds', () => activities.abRegisterAdds(base)],
      [
        'abAwaitNetworkCount',
        () =>
          activities.abAwaitNetworkCount({
            ...base,
            from: 0,
            expected: 0,
            direction: 'up',
            timeoutMs: 10,
            pollMs: 10,
            settleMs: 10,
          }),
      ],
      [
        'abUploadChunk',
        () => activities.abUploadChunk({ ...base, chunkNo: 1, baseCount: 0, timeoutMs: 10, pollMs: 10 }),
      ],
      ['abVerify', () => activities.abVerify({ ...base, countReached: true, verify: 'count' })],
      ['abFinishRun', () => activities.abFinishRun({ runId: injected, status: 'failed', phases: {} })],
    ];
    for (const [name, call] of calls) {
      const failure = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect({ name, failure }).toEqual({ name, failure: expect.any(ApplicationFailure) });
      const f = failure as ApplicationFailure;
      expect({ name, type: f.type, nonRetryable: f.nonRetryable, details: f.details }).toEqual({
        name,
        type: 'ValidationError',
        nonRetryable: true,
        details: [expect.objectContaining({ field: 'runId' })],
      });
    }
    // Spelled as the same UUID in capitals or braces, it is refused too: only the canonical form names a table.
    await expect(
      addressBookActivities({
        pool: counting,
        network: undefined as never,
        logger: quietLogger(),
        addressBook: addressBookTestSettings(),
      }).abListNetwork({ runId: `{${randomUUID()}}`, vaspDid: group.subA }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(seen).toEqual([]);
    expect(await canaryExists()).toBe(true);
  });

  it('a workflow resumed with it fails at once, and the database is untouched', async () => {
    const runsBefore = (await orch.pool.query<{ n: string }>('select count(*) as n from address_book_runs')).rows[0]!.n;
    const handle = await orch.client.workflow.start(addressBookReconcile, {
      taskQueue: orch.taskQueue,
      workflowId: `reconcile-injection-${randomUUID()}`,
      args: [
        {
          vaspDid: group.subA,
          trigger: 'test',
          resume: {
            runId: injected,
            startedAtMs: Date.now(),
            phase: 'listing',
            execution: 1,
            nextChunk: 1,
            rowsDone: 0,
            chunksDone: 0,
            phases: {},
            settings: {
              chunksPerExecution: 20,
              processingTimeoutMs: 1000,
              pollIntervalMs: 50,
              settleMs: 100,
              verify: 'count',
            },
            mode: 'full',
          },
        },
      ],
    });
    const failure = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    // The workflow's own failure names the activity's: the run id was refused, not retried.
    const history = await handle.fetchHistory();
    const activityFailures = (history.events ?? [])
      .filter((e) => e.activityTaskFailedEventAttributes)
      .map((e) => e.activityTaskFailedEventAttributes!.failure!);
    expect(activityFailures.length).toBeGreaterThan(0);
    for (const f of activityFailures) {
      expect(f.applicationFailureInfo).toEqual(
        expect.objectContaining({ type: 'ValidationError', nonRetryable: true }),
      );
    }
    expect((await orch.pool.query<{ n: string }>('select count(*) as n from address_book_runs')).rows[0]!.n).toBe(
      runsBefore,
    );
    expect(await canaryExists()).toBe(true);
  });
});
