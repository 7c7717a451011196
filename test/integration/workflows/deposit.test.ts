import { randomBytes } from 'node:crypto';
import type { DepositMatch, DepositTransition } from '../../../deposits/types';
import { deposit } from '../../../workflows/deposit';
import { depositDecisionUpdate, depositStateQuery } from '../../../workflows/deposit.messages';
import type { DepositInput } from '../../../workflows/deposit.messages';
import {
  callsOf,
  runWithStubs,
  stubWorker,
  timersOf,
  workflowTestEnvironment,
  type Stubs,
} from '../../harness/workflow-env';
import { eventually } from '../../harness/platform';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';

/**
 * The deposit workflow's decisions and durable timers, with stubbed activities and short durations (the dev server
 * does not skip time; the timers' configured durations and fire times are read from the history): an INCOMPLETE
 * message past the data deadline requires a return, checked once more at the deadline by a timer cut to it rather than
 * after the hour-long recheck; rechecks back off and stop reporting once a message stands; a declined transfer requires
 * a return; below the threshold nothing is checked.
 */
describe('deposit workflow: data deadline, rechecks with backoff, decisions', () => {
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
    // A required return escalates after 100 ms unconfirmed (deposit-return.test.ts tests that wait).
    returnConfirmationMs: 100,
    ...over,
  });
  /** Stubs answering the network's status from `statuses` in turn (the last one repeated). */
  const stubs = (statuses: string[]): Stubs => {
    let i = 0;
    return {
      checkDeposit: async (): Promise<DepositMatch> => ({
        transactionId: 'tx-1',
        networkStatus: statuses[Math.min(i++, statuses.length - 1)]!,
      }),
      transitionDeposit: async () => undefined,
      deliverCustodyCallback: async () => ({ delivered: true }),
      escalateReturn: async () => ({ escalated: true }),
    };
  };
  const run = async (args: DepositInput, s: Stubs) => {
    const { result, events, calls } = await runWithStubs(env, deposit, [args], s, `deposit-${args.id}`);
    const writes = callsOf(calls, 'transitionDeposit').map((c) => c.args[0] as DepositTransition);
    const checks = callsOf(calls, 'checkDeposit').map((c) => c.args[0] as { notify: boolean });
    return { result, events, writes, checks };
  };

  it('the originator never completes the INCOMPLETE message: RETURN_REQUIRED at the data deadline, not an hour later', async () => {
    const args = input({
      dataDeadlineAt: new Date(Date.now() + 3_000).toISOString(),
      recheckInitialMs: 3_600_000,
      recheckMaxMs: 3_600_000,
    });
    const started = Date.now();
    const { result, events, writes, checks } = await run(args, stubs(['INCOMPLETE']));
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result).toMatchObject({ status: 'RETURN_REQUIRED', transactionId: 'tx-1', networkStatus: 'INCOMPLETE' });
    expect(writes.map((w) => w.status)).toEqual(['AWAITING_DATA', 'RETURN_REQUIRED']);
    expect(writes[1]).toMatchObject({ reason: expect.stringMatching(/deadline/), actor: 'system:deposit' });
    // Reported again at the deadline (the match window is still open): the originator may have added its data.
    expect(checks).toEqual([expect.objectContaining({ notify: true }), expect.objectContaining({ notify: true })]);
    const timers = timersOf(events);
    // The recheck cut to the deadline, then the wait for the return's confirmation.
    expect(timers.map((t) => t.durationMs).slice(1)).toEqual([100]);
    expect(timers[0]!.durationMs).toBeLessThanOrEqual(3_000);
    expect(timers[0]!.firedAt).toBeGreaterThanOrEqual(Date.parse(args.dataDeadlineAt) - 50);
  });

  /**
   * Stubs whose first check fails as a network that is down does (retried by the workflow, 2 s later), then answer
   * INCOMPLETE; `asked` is when the first INCOMPLETE answer was given, `returned` when RETURN_REQUIRED was written.
   */
  const askedLate = () => {
    const seen: { asked?: number; returned?: number } = {};
    let calls = 0;
    const s: Stubs = {
      checkDeposit: async (): Promise<DepositMatch> => {
        if (calls++ === 0) throw ApplicationFailure.retryable('POST /tx/notify: network answered 503', 'UpstreamError');
        seen.asked ??= Date.now();
        return { transactionId: 'tx-1', networkStatus: 'INCOMPLETE', checkedAt: Date.now() };
      },
      transitionDeposit: async (t: DepositTransition) => {
        if (t.status === 'RETURN_REQUIRED') seen.returned ??= Date.now();
        return undefined;
      },
      deliverCustodyCallback: async () => ({ delivered: true }),
      escalateReturn: async () => ({ escalated: true }),
    };
    return { s, seen };
  };

  it("the network answers only after the report's deadline: the deadline counts from the INCOMPLETE message, RETURN_REQUIRED at it", async () => {
    // The report's deadline passes while the first check waits for its retry; the originator then gets its 2.5 s.
    const args = input({ dataDeadlineAt: new Date(Date.now() + 500).toISOString(), dataDeadlineMs: 2_500 });
    const { s, seen } = askedLate();
    const { result, writes } = await run(args, s);
    expect(result).toMatchObject({ status: 'RETURN_REQUIRED', networkStatus: 'INCOMPLETE' });
    expect(writes.map((w) => w.status)).toEqual(['AWAITING_DATA', 'RETURN_REQUIRED']);
    expect(seen.asked!).toBeGreaterThan(Date.parse(args.dataDeadlineAt));
    // The AWAITING_DATA write carries the deadline counted from the request, and the return waits for it.
    const deadline = Date.parse(writes[0]!.dataDeadlineAt!);
    expect(deadline - seen.asked!).toBeGreaterThanOrEqual(2_500 - 50);
    expect(deadline - seen.asked!).toBeLessThan(2_500 + 1_000);
    expect(seen.returned!).toBeGreaterThanOrEqual(deadline - 50);
    expect(writes[1]!.dataDeadlineAt).toBeUndefined();
  });

  it('continued as new, a run keeps the deadline counted from the first INCOMPLETE message rather than starting it again', async () => {
    const args = input({
      dataDeadlineAt: new Date(Date.now() + 500).toISOString(),
      dataDeadlineMs: 2_500,
      checksPerRun: 2,
    });
    const { s, seen } = askedLate();
    const { result, writes, events } = await run(args, s);
    expect(result).toMatchObject({ status: 'RETURN_REQUIRED', networkStatus: 'INCOMPLETE' });
    expect(events[0]!.workflowExecutionStartedEventAttributes!.continuedExecutionRunId).toBeTruthy();
    expect(writes.map((w) => w.status)).toEqual(['AWAITING_DATA', 'RETURN_REQUIRED']);
    const deadline = Date.parse(writes[0]!.dataDeadlineAt!);
    expect(seen.returned!).toBeGreaterThanOrEqual(deadline - 50);
    expect(seen.returned! - deadline).toBeLessThan(1_500);
  });

  it("the deadline's action 'release': RELEASED at the data deadline, by the subsidiary's policy", async () => {
    const args = input({ dataDeadlineAt: new Date(Date.now() + 1_500).toISOString(), deadlineAction: 'release' });
    const { result, writes } = await run(args, stubs(['INCOMPLETE']));
    expect(result).toMatchObject({ status: 'RELEASED', networkStatus: 'INCOMPLETE' });
    // AWAITING_DATA first unless the first check itself came after the deadline (a loaded machine): then the release.
    expect(writes.map((w) => w.status).filter((s) => s !== 'AWAITING_DATA')).toEqual(['RELEASED']);
    expect(writes.at(-1)).toMatchObject({ reason: expect.stringMatching(/policy releases/), actor: 'system:deposit' });
  });

  it("the deadline's action 'review': held for a compliance officer past the deadline, checks going on, until the officer decides", async () => {
    const args = input({ dataDeadlineAt: new Date(Date.now() + 1_500).toISOString(), deadlineAction: 'review' });
    const { worker, taskQueue, calls } = await stubWorker(env, stubs(['INCOMPLETE']));
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(deposit, {
        taskQueue,
        workflowId: `deposit-${args.id}`,
        args: [args],
      });
      // Past the deadline: the hold's reason is written once, and the deposit is still checked, undecided.
      const held = () =>
        callsOf(calls, 'transitionDeposit').filter((c) =>
          /held for a compliance officer/.test((c.args[0] as DepositTransition).reason ?? ''),
        ).length;
      const until = Date.now() + 20_000;
      while (held() === 0 || callsOf(calls, 'checkDeposit').length < 6) {
        if (Date.now() > until) throw new Error('not held past the deadline within 20 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(held()).toBe(1);
      expect((await handle.query(depositStateQuery)).status).toBe('AWAITING_DATA');
      const decided = await handle.executeUpdate(depositDecisionUpdate, {
        args: [{ decision: 'return', reason: 'no data after a look at the chain', actor: 'oidc:carla' }],
      });
      expect(decided).toMatchObject({ status: 'RETURN_REQUIRED', decidedBy: 'oidc:carla' });
      return handle.result();
    });
    expect(result).toMatchObject({ status: 'RETURN_REQUIRED', decidedBy: 'oidc:carla' });
  });

  it('matched, answered later: rechecks back off (doubling to the maximum) and start again from the first wait once the match moves, read the message once it stands, RELEASED on ACCEPTED', async () => {
    const { result, events, writes, checks } = await run(
      input(),
      stubs(['INCOMPLETE', 'INCOMPLETE', 'INCOMPLETE', 'INCOMPLETE', 'SENT', 'ACK', 'ACCEPTED']),
    );
    expect(result).toMatchObject({ status: 'RELEASED', networkStatus: 'ACCEPTED' });
    expect(writes.map((w) => [w.status, w.match?.networkStatus])).toEqual([
      ['AWAITING_DATA', 'INCOMPLETE'],
      ['HELD', 'SENT'],
      ['HELD', 'ACK'],
      ['RELEASED', 'ACCEPTED'],
    ]);
    // Reported while INCOMPLETE; read (tx/info) once the originator's data made it SENT.
    expect(checks.map((c) => c.notify)).toEqual([true, true, true, true, true, false, false]);
    // 100 → 200 → 300 (the maximum) while nothing moves; SENT and ACK each start the backoff again.
    expect(timersOf(events).map((t) => t.durationMs)).toEqual([100, 200, 300, 300, 100, 100]);
  });

  it('the network refuses a check for good: still HELD with the reason, checked again, then RELEASED', async () => {
    let refused = false;
    const s: Stubs = {
      checkDeposit: async (): Promise<DepositMatch> => {
        if (!refused) {
          refused = true;
          throw ApplicationFailure.nonRetryable('POST /tx/notify: network answered 400', 'UpstreamRejectedError');
        }
        return { transactionId: 'tx-2', networkStatus: 'ACCEPTED' };
      },
      transitionDeposit: async () => undefined,
      deliverCustodyCallback: async () => ({ delivered: true }),
      escalateReturn: async () => ({ escalated: true }),
    };
    const { result, writes, checks } = await run(input(), s);
    expect(result).toMatchObject({ status: 'RELEASED', transactionId: 'tx-2' });
    expect(writes.map((w) => w.status)).toEqual(['HELD', 'RELEASED']);
    expect(writes[0]!.reason).toMatch(/^the network refused the check: UpstreamRejectedError: .*400/);
    expect(checks.map((c) => c.notify)).toEqual([true, true]);
  });

  it("refusals by the group's budget count as attempts, yet the next report waits at most a minute", async () => {
    // Eight refusals, each to be retried 10 ms later (as activities/failures.ts maps a RateLimitedError), then a 503:
    // the ninth attempt's backoff is 2 s × 2⁸, which the policy caps. Past 10 s, the wait is a durable timer.
    let calls = 0;
    const s: Stubs = {
      checkDeposit: async (): Promise<DepositMatch> => {
        if (++calls <= 8) {
          throw ApplicationFailure.create({
            type: 'RateLimitedError',
            message: "POST /tx/notify: the group's network budget has no free call for 10 ms",
            nextRetryDelay: 10,
          });
        }
        throw ApplicationFailure.retryable('POST /tx/notify: network answered 503', 'UpstreamUnavailableError');
      },
      transitionDeposit: async () => undefined,
    };
    const { worker, taskQueue } = await stubWorker(env, s);
    const args = input();
    const timer = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(deposit, {
        taskQueue,
        workflowId: `deposit-${args.id}`,
        args: [args],
      });
      try {
        return await eventually(async () => timersOf((await handle.fetchHistory()).events ?? [])[0]);
      } finally {
        await handle.terminate('test over');
      }
    });
    expect(calls).toBe(9);
    expect(timer.durationMs).toBe(60_000);
  });

  it('continues as new after its checks per run, carrying the match, the window and the backoff', async () => {
    const args = input({ checksPerRun: 2 });
    const { result, writes, checks, events } = await run(
      args,
      stubs(['INCOMPLETE', 'INCOMPLETE', 'INCOMPLETE', 'ACCEPTED']),
    );
    expect(result).toMatchObject({ status: 'RELEASED', transactionId: 'tx-1', networkStatus: 'ACCEPTED' });
    // The INCOMPLETE match is carried over: the second run neither writes it again nor stops reporting it.
    expect(writes.map((w) => [w.status, w.match?.networkStatus])).toEqual([
      ['AWAITING_DATA', 'INCOMPLETE'],
      ['RELEASED', 'ACCEPTED'],
    ]);
    expect(checks.map((c) => c.notify)).toEqual([true, true, true, true]);
    // The last run's history: it started from the previous one, with the backoff where that one left it (200, 300).
    const started = events[0]!.workflowExecutionStartedEventAttributes!;
    expect(started.continuedExecutionRunId).toBeTruthy();
    expect(timersOf(events).map((t) => t.durationMs)).toEqual([300]);
  });

  it('the group declined the matched transfer: RETURN_REQUIRED', async () => {
    const { result, writes } = await run(input(), stubs(['SENT', 'DECLINED']));
    expect(result.status).toBe('RETURN_REQUIRED');
    expect(writes.at(-1)).toMatchObject({ status: 'RETURN_REQUIRED', reason: expect.stringMatching(/DECLINED/) });
  });

  it('below the threshold: RELEASED at once, nothing checked at the network', async () => {
    const { result, writes, checks, events } = await run(input({ classification: 'BELOW_THRESHOLD' }), stubs([]));
    expect(result.status).toBe('RELEASED');
    expect(writes).toEqual([expect.objectContaining({ status: 'RELEASED', reason: expect.stringMatching(/below/) })]);
    expect(checks).toEqual([]);
    expect(timersOf(events)).toEqual([]);
  });

  it('a new run asks one patch, which stands for the four before it: one patch marker, one change-version upsert', async () => {
    const { result, events } = await run(input(), stubs(['ACCEPTED']));
    expect(result.status).toBe('RELEASED');
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(1);
    const versions = events.flatMap((e) => {
      const field =
        e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion;
      return field?.data ? [JSON.parse(Buffer.from(field.data).toString()) as string[]] : [];
    });
    expect(versions).toEqual([['deposit-patches-folded']]);
  });
});
