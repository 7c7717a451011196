import { randomBytes } from 'node:crypto';
import { addBusinessDays } from '../../../deposits/status';
import type { DepositTransition } from '../../../deposits/types';
import { deposit } from '../../../workflows/deposit';
import { depositReturnedSignal, depositStateQuery, type DepositInput } from '../../../workflows/deposit.messages';
import {
  callsOf,
  runWithStubs,
  stubWorker,
  timersOf,
  workflowTestEnvironment,
  type Stubs,
} from '../../harness/workflow-env';
import type { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * After its decision the deposit workflow tells the custody system (deposit.release / deposit.return, stubbed here)
 * and a required return waits for its confirmation: 10 business days on a durable timer, then an escalation. The dev
 * server does not skip time: the 10-business-day timer's configured duration is read from the history and the
 * confirmation signalled; the escalation itself runs with a 1 s wait (`returnConfirmationMs`).
 */
describe('deposit workflow: custody callbacks, the wait for a return’s confirmation, its escalation', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const input = (over: Partial<DepositInput> = {}): DepositInput => ({
    id: `dep-${randomBytes(6).toString('hex')}`,
    vaspDid: 'did:ethr:0x00000000000000000000000000000000000000aa',
    classification: 'TRAVELRULE',
    dataDeadlineAt: new Date(Date.now() + 3_600_000).toISOString(),
    matchWindowMs: 3_600_000,
    recheckInitialMs: 100,
    recheckMaxMs: 300,
    ...over,
  });
  const stubs = (networkStatus: string): Stubs => ({
    checkDeposit: async () => ({ transactionId: 'tx-1', networkStatus }),
    transitionDeposit: async () => undefined,
    deliverCustodyCallback: async () => ({ delivered: true }),
    escalateReturn: async () => ({ escalated: true }),
  });

  it('DECLINED: deposit.return, then the confirmation waits 10 business days; the confirmation ends it, no escalation', async () => {
    const args = input();
    const { worker, taskQueue, calls } = await stubWorker(env, stubs('DECLINED'));
    const { result, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(deposit, {
        taskQueue,
        workflowId: `deposit-${args.id}`,
        args: [args],
      });
      // Waiting: the return was required and announced.
      for (let i = 0; i < 100 && callsOf(calls, 'deliverCustodyCallback').length === 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await handle.query(depositStateQuery)).toMatchObject({ status: 'RETURN_REQUIRED' });
      await handle.signal(depositReturnedSignal);
      return { result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ status: 'RETURNED' });
    const writes = callsOf(calls, 'transitionDeposit').map((c) => c.args[0] as DepositTransition);
    expect(writes.map((w) => w.status)).toEqual(['RETURN_REQUIRED']);
    expect(callsOf(calls, 'deliverCustodyCallback').map((c) => c.args[0])).toEqual([
      { id: args.id, event: 'deposit.return' },
    ]);
    expect(callsOf(calls, 'escalateReturn')).toEqual([]);
    // The wait's durable timer: 10 business days from when it started (the workflow's clock then), cancelled.
    const wait = timersOf(events).at(-1)!;
    const expected = addBusinessDays(wait.startedAt, 10) - wait.startedAt;
    expect(Math.abs(wait.durationMs - expected)).toBeLessThan(5_000);
    // At least 12 calendar days (from a Sunday), whatever day the test runs.
    expect(wait.durationMs).toBeGreaterThanOrEqual(12 * 24 * 3600 * 1000 - 5_000);
    expect(wait.cancelled).toBe(true);
    expect(wait.firedAt).toBeUndefined();
  });

  it('a return not confirmed in time escalates once, and the run ends with the deposit still RETURN_REQUIRED', async () => {
    const args = input({ returnConfirmationMs: 1_000 });
    const { worker, taskQueue, calls } = await stubWorker(env, stubs('REJECTED'));
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(deposit, {
        taskQueue,
        workflowId: `deposit-${args.id}`,
        args: [args],
      });
      return handle.result();
    });
    expect(result).toMatchObject({ status: 'RETURN_REQUIRED', escalated: true });
    const escalations = callsOf(calls, 'escalateReturn');
    expect(escalations).toHaveLength(1);
    const callback = callsOf(calls, 'deliverCustodyCallback')[0]!;
    expect(escalations[0]!.at - callback.at).toBeGreaterThanOrEqual(900);
    expect(escalations[0]!.args[0]).toEqual({ id: args.id, deadline: expect.any(String) });
  });

  it('RELEASED on ACCEPTED: deposit.release, retried until acknowledged, and nothing waited for', async () => {
    const args = input();
    let attempts = 0;
    const s: Stubs = {
      ...stubs('ACCEPTED'),
      deliverCustodyCallback: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('the custody system answered 500');
        return { delivered: true };
      },
    };
    const { result, events, calls } = await runWithStubs(env, deposit, [args], s, `deposit-${args.id}`);
    expect(result.status).toBe('RELEASED');
    expect(callsOf(calls, 'deliverCustodyCallback').map((c) => c.args[0])).toEqual([
      { id: args.id, event: 'deposit.release' },
      { id: args.id, event: 'deposit.release' },
    ]);
    expect(timersOf(events)).toEqual([]);
  });

  it('no callback URL configured (custodyCallbacks false): no callback activity; a return still waits for its confirmation and escalates', async () => {
    const released = input({ custodyCallbacks: false });
    const returned = input({ custodyCallbacks: false, returnConfirmationMs: 1_000 });
    const scheduled = (events: { activityTaskScheduledEventAttributes?: unknown }[]) =>
      events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    for (const [args, status] of [
      [released, 'ACCEPTED'],
      [returned, 'REJECTED'],
    ] as const) {
      const { result, events, calls } = await runWithStubs(env, deposit, [args], stubs(status), `deposit-${args.id}`);
      expect(callsOf(calls, 'deliverCustodyCallback')).toEqual([]);
      if (args === released) {
        expect(result.status).toBe('RELEASED');
        // The checks and writes are local activities: the run schedules no activity at all.
        expect(scheduled(events)).toBe(0);
      } else {
        expect(result).toMatchObject({ status: 'RETURN_REQUIRED', escalated: true });
        expect(callsOf(calls, 'escalateReturn')).toHaveLength(1);
        expect(scheduled(events)).toBe(1);
      }
    }
  });
});
