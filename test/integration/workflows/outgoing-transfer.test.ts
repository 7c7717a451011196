import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../../lib/temporal/data-converter';
import { testEnv } from '../../harness/platform';
import {
  silentCounterparty,
  STUB_BENEFICIARY,
  STUB_ORIGINATOR,
  stubCreated,
  stubPlan,
} from '../../harness/outgoing-stubs';
import { outgoingTransfer, type OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import {
  reviewOutgoingUpdate,
  transactionUpdatedSignal,
  transferStatusQuery,
} from '../../../workflows/outgoing-transfer.messages';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { callsOf, firstTaskStartedAt, stubWorker, timersOf, workflowTestEnvironment } from '../../harness/workflow-env';

/**
 * The outgoing transfer's wait for the counterparty's answer, with stubbed activities: the poll interval and the answer
 * deadline are timers, and at the deadline the transaction is withdrawn at the network.
 */
describe('outgoing transfer workflow: poll interval, answer deadline, expiry', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const POLL_MS = 1000;
  const DEADLINE_MS = 3000;
  const originator = STUB_ORIGINATOR;
  const beneficiary = STUB_BENEFICIARY;

  const input = (over: Partial<OutgoingTransferInput> = {}): OutgoingTransferInput => ({
    id: `ref-${randomBytes(4).toString('hex')}`,
    originatorVaspDid: originator,
    beneficiaryVaspDid: beneficiary,
    asset: 'ETH',
    amount: '1',
    answerDeadlineMs: DEADLINE_MS,
    pollIntervalMs: POLL_MS,
    report: true,
    ...over,
  });
  const plan = stubPlan;
  const created = stubCreated;
  const silent = silentCounterparty;

  it('polls every interval, and at the deadline cancels the transaction at the network and ends EXPIRED', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent());
    const args = input();
    const { state, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      const state = await handle.result();
      return { state, events: (await handle.fetchHistory()).events ?? [] };
    });

    expect(state.status).toBe('EXPIRED');
    expect(state.final).toBe(true);
    expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'EXPIRED']);
    expect(state.history.at(-1)!.source).toBe('deadline: cancelled at the network');

    // The deadline is a timer of its own, started once the transaction exists; the wait between polls is one timer per
    // poll interval, and the deadline's firing ends the one in progress (cancelled, or fired at the same moment).
    const [deadline, ...polls] = timersOf(events);
    expect(deadline).toMatchObject({ durationMs: DEADLINE_MS, cancelled: false });
    expect(deadline!.firedAt! - deadline!.startedAt).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(polls.length).toBeLessThanOrEqual(3);
    expect(polls.every((t) => t.durationMs === POLL_MS)).toBe(true);
    for (const t of polls.filter((p) => p.firedAt !== undefined))
      expect(t.firedAt! - t.startedAt).toBeGreaterThanOrEqual(t.durationMs - 5);
    expect(polls.every((t) => t.startedAt < deadline!.firedAt!)).toBe(true);

    // A poll after each interval that ended before the deadline (one that ended with it may give way to the deadline),
    // then the cancellation once the deadline's timer fired, then the report.
    // One step prepares and creates (no plan from an API here: the worker plans).
    const sends = callsOf(calls, 'sendOutgoingTransfer');
    expect(sends.map((c) => c.args)).toEqual([
      [
        {
          id: args.id,
          view: expect.objectContaining({ status: 'RECEIVED', version: 1 }),
          // The outgoing policy decides on the transfer's metadata in the same step.
          decide: {
            transferId: args.id,
            direction: 'outgoing',
            vaspDid: originator,
            counterpartyDid: beneficiary,
            asset: 'ETH',
            amount: '1',
            createdAt: state.history[0]!.at,
          },
        },
      ],
    ]);
    const fetches = callsOf(calls, 'fetchOutgoingStatus');
    const endedBefore = polls.filter((t) => t.firedAt !== undefined && t.firedAt < deadline!.firedAt!).length;
    expect(fetches.length).toBeGreaterThanOrEqual(endedBefore - 1);
    expect(fetches.length).toBeLessThanOrEqual(endedBefore);
    expect(fetches.every((c) => JSON.stringify(c.args) === JSON.stringify([{ transactionId: 'tx-1' }]))).toBe(true);
    const cancel = callsOf(calls, 'cancelOutgoingTransaction');
    expect(cancel.map((c) => c.args)).toEqual([
      [{ transactionId: 'tx-1', reason: 'no answer from the beneficiary VASP before the deadline' }],
    ]);
    // The deadline counts from the workflow's clock when the transaction was created: the time its workflow task started,
    // which the local activities before it do not move (so on a busy machine it can be before the stub's first call).
    const clockAt = firstTaskStartedAt(events);
    expect(cancel[0]!.at - clockAt).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    // Not long after either (generous: the machine may be busy).
    expect(cancel[0]!.at - clockAt).toBeLessThan(DEADLINE_MS + 10_000);
    expect(cancel[0]!.at).toBeGreaterThanOrEqual(deadline!.firedAt! - 5);
    expect(fetches.every((c) => c.at < cancel[0]!.at)).toBe(true);
    // The last step writes the final list entry and reports, in one local activity.
    const finishes = callsOf(calls, 'finishOutgoingTransfer').map(
      (c) => c.args[0] as { view?: { status: string; version: number }; report?: unknown },
    );
    expect(finishes).toHaveLength(1);
    expect(finishes[0]!.report).toMatchObject({
      id: args.id,
      status: 'EXPIRED',
      transactionId: 'tx-1',
      originatorVaspDid: originator,
      beneficiaryVaspDid: beneficiary,
      mode: 'end-to-end',
    });
    expect(finishes[0]!.view).toMatchObject({ status: 'EXPIRED', final: true, version: 4 });
    expect(calls.at(-1)!.name).toBe('finishOutgoingTransfer');
    // The console's list saw the created transaction (written by the send step, which the workflow found current) and
    // the end: no separate list writes; nothing but these four steps ran.
    expect(callsOf(calls, 'recordTransferView')).toHaveLength(0);
    expect([...new Set(calls.map((c) => c.name))].sort()).toEqual([
      'cancelOutgoingTransaction',
      'fetchOutgoingStatus',
      'finishOutgoingTransfer',
      'sendOutgoingTransfer',
    ]);
  });

  it('an answer that beats the cancellation is the outcome', async () => {
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      silent({ cancelOutgoingTransaction: async () => ({ status: 'ACCEPTED', cancelled: false }) }),
    );
    const args = input();
    const state = await worker.runUntil(
      env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }),
    );
    expect(state.status).toBe('ACCEPTED');
    expect(state.history.at(-1)).toMatchObject({ status: 'ACCEPTED', source: 'network' });
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(1);
    expect(callsOf(calls, 'finishOutgoingTransfer')[0]!.args[0]).toMatchObject({ report: { status: 'ACCEPTED' } });
  });

  it('a network that refuses the cancellation still ends the transfer EXPIRED, saying the transaction may be open', async () => {
    const refuse = async () => {
      throw ApplicationFailure.create({ type: 'UpstreamError', message: 'the network refused', nonRetryable: true });
    };
    const { worker, taskQueue, calls } = await stubWorker(env, silent({ cancelOutgoingTransaction: refuse }));
    const args = input();
    const state = await worker.runUntil(
      env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }),
    );
    expect(state.status).toBe('EXPIRED');
    expect(state.history.at(-1)!.source).toMatch(/^deadline: not cancelled at the network .*may still be open/);
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(1);
    expect(callsOf(calls, 'finishOutgoingTransfer')[0]!.args[0]).toMatchObject({ report: { status: 'EXPIRED' } });
  });

  it('a final answer by webhook before the deadline ends the wait at once: no poll, no cancellation', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 60_000, answerDeadlineMs: 600_000 });
    const started = Date.now();
    const { state, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      // Sent once the transaction exists: an update for another transaction is ignored, this one ends the transfer.
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      await handle.signal(transactionUpdatedSignal, {
        transactionId: 'tx-other',
        status: 'DECLINED',
        source: 'webhook',
      });
      await handle.signal(transactionUpdatedSignal, {
        transactionId: 'tx-1',
        status: 'ACCEPTED',
        source: 'webhook',
        webhookId: 'wh-1',
      });
      return { state: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(state.status).toBe('ACCEPTED');
    expect(state.history.at(-1)).toMatchObject({ status: 'ACCEPTED', source: 'webhook' });
    expect(callsOf(calls, 'fetchOutgoingStatus')).toHaveLength(0);
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(0);
    // The deadline's timer (left to the workflow's end) and the poll interval's (cancelled by the answer).
    const timers = timersOf(events);
    expect(timers).toEqual([
      expect.objectContaining({ durationMs: 600_000, cancelled: false }),
      expect.objectContaining({ durationMs: 60_000, cancelled: true }),
    ]);
    expect(timers.every((t) => t.firedAt === undefined)).toBe(true);
  });

  it("updates that arrive out of order never move the status back: ordered by the network's updatedAt, else by progress", async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 60_000, answerDeadlineMs: 600_000 });
    const at = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s)).toISOString();
    const { state, seen } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      const send = (status: string, updatedAt?: string) =>
        handle.signal(transactionUpdatedSignal, {
          transactionId: 'tx-1',
          status,
          source: 'webhook',
          ...(updatedAt ? { updatedAt } : {}),
        });
      const seen: string[] = [];
      const look = async () => seen.push((await handle.query(transferStatusQuery)).status);
      // The counterparty said NOT_READY at :02; the SENT of :01 is delivered after it and must not undo it.
      await send('NOT_READY', at(2));
      await send('SENT', at(1));
      await look();
      // Without a timestamp, a status that has come less far is the older one.
      await send('SENT');
      await look();
      // A newer timestamp moves between statuses of the same progress (NOT_READY → ACK is the network's own path).
      await send('ACK', at(3));
      await send('NOT_READY', at(2));
      await look();
      await send('ACCEPTED', at(4));
      return { state: await handle.result(), seen };
    });
    expect(seen).toEqual(['NOT_READY', 'NOT_READY', 'ACK']);
    expect(state.history.map((h) => h.status)).toEqual([
      'RECEIVED',
      'PREPARED',
      'SENT',
      'NOT_READY',
      'ACK',
      'ACCEPTED',
    ]);
  });

  it("passes the API's plan to the send step, and writes the list entry itself when the send step could not", async () => {
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      silent({
        sendOutgoingTransfer: async () => ({ plan, created, view: undefined }),
        finishOutgoingTransfer: async () => ({ viewWritten: false, delivered: true }),
        cancelOutgoingTransaction: async () => ({ status: 'ACCEPTED', cancelled: false }),
      }),
    );
    const args = input({ plan, answerDeadlineMs: 1000 });
    const state = await worker.runUntil(
      env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }),
    );
    expect(state.status).toBe('ACCEPTED');
    expect(callsOf(calls, 'sendOutgoingTransfer')[0]!.args[0]).toMatchObject({ id: args.id, plan });
    // The send step's write failed: SENT written separately; the finish's write failed: ACCEPTED written separately.
    expect(callsOf(calls, 'recordTransferView').map((c) => (c.args[0] as { status: string }).status)).toEqual([
      'SENT',
      'ACCEPTED',
    ]);
  });

  it("a CANCELLED before the deadline is someone else's: confirmed at the network, the transfer ends CANCELLED", async () => {
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      silent({ fetchOutgoingStatus: async () => ({ status: 'CANCELLED' }) }),
    );
    const args = input({ pollIntervalMs: 60_000, answerDeadlineMs: 600_000 });
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'CANCELLED', source: 'webhook' });
      return handle.result();
    });
    expect(state.status).toBe('CANCELLED');
    expect(state.history.at(-1)).toMatchObject({ status: 'CANCELLED', source: 'webhook' });
    expect(callsOf(calls, 'fetchOutgoingStatus')).toHaveLength(1);
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(0);
  });

  it("a CANCELLED heard in the activation where the deadline's timer fires is the deadline's (a worker died after cancelling)", async () => {
    // The worker that cancelled at the deadline died before recording it; the network's CANCELLED webhook and the
    // deadline's timer reach the next worker in one activation, the signal first.
    const first = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 60_000, answerDeadlineMs: 2000 });
    const handle = await first.worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue: first.taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      while (timersOf((await handle.fetchHistory()).events ?? []).length < 2)
        await new Promise((r) => setTimeout(r, 50));
      return handle;
    });
    while (!timersOf((await handle.fetchHistory()).events ?? [])[0]?.firedAt)
      await new Promise((r) => setTimeout(r, 100));
    await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'CANCELLED', source: 'webhook' });
    const second = await stubWorker(env, silent(), first.taskQueue);
    const state = await second.worker.runUntil(handle.result());
    expect(state.status).toBe('EXPIRED');
    expect(state.history.at(-1)).toMatchObject({
      status: 'EXPIRED',
      source: 'deadline: cancelled at the network (webhook)',
    });
    expect(callsOf(second.calls, 'cancelOutgoingTransaction')).toHaveLength(0);
    // The scenario: the timer fired, then the signal came, before the next workflow task started.
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const fired = events.findIndex((e) => e.timerFiredEventAttributes);
    const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
    const nextTask = events.findIndex((e, i) => i > fired && e.workflowTaskStartedEventAttributes);
    expect(fired).toBeGreaterThan(0);
    expect(signalled).toBeGreaterThan(fired);
    expect(nextTask).toBeGreaterThan(signalled);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: testEnv().workflowBundle }, dataConverter: createDataConverter(testEnv().keyring) },
      history,
    );
  });

  it('replays a history in which a poll ran through workflow-task heartbeats past the deadline', async () => {
    // A local activity that outlives 80 % of the workflow task timeout makes the worker heartbeat the task (complete
    // it with no commands and take a new one). When the task before had no commands either (here a repeated webhook),
    // core replays those tasks as one, with the start time of the last: the activation that started the poll reads a
    // later clock on replay than when it ran. A workflow that compared that clock with the deadline would, on replay
    // (a query once the worker's cache dropped it, a worker restart), cancel where the run had polled: a nondeterminism
    // error, and the transfer's status unreadable through the API. The deadline is a timer for this reason.
    const POLL_RUNS_MS = 8000;
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      silent({
        fetchOutgoingStatus: async () => {
          await new Promise((r) => setTimeout(r, POLL_RUNS_MS));
          return { status: 'SENT' };
        },
      }),
    );
    const args = input({ pollIntervalMs: 2000, answerDeadlineMs: 5000 });
    const { state, history } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
        workflowTaskTimeout: '2 seconds',
      });
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      // The network repeats a webhook: the workflow task that hears it changes nothing and records no command.
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'SENT', source: 'webhook' });
      const state = await handle.result();
      return { state, history: await handle.fetchHistory() };
    });
    const events = history.events ?? [];
    // The scenario: one poll, started before the deadline, still running through heartbeats when the deadline passed.
    const heartbeats = events.filter(
      (e, i) => e.workflowTaskCompletedEventAttributes && events[i + 1]?.workflowTaskScheduledEventAttributes,
    ).length;
    expect(heartbeats).toBeGreaterThan(0);
    const polls = callsOf(calls, 'fetchOutgoingStatus');
    expect(polls).toHaveLength(1);
    expect(polls[0]!.at - firstTaskStartedAt(events)).toBeLessThan(args.answerDeadlineMs);
    expect(polls[0]!.at + POLL_RUNS_MS - firstTaskStartedAt(events)).toBeGreaterThan(args.answerDeadlineMs);
    expect(state.status).toBe('EXPIRED');
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(1);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: testEnv().workflowBundle }, dataConverter: createDataConverter(testEnv().keyring) },
      history,
    );
  });

  it("a history of the one-step path replays through the same code (the send step's list entry is compared deterministically)", async () => {
    const { worker, taskQueue } = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 500, answerDeadlineMs: 1200 });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await handle.result();
      return handle.fetchHistory();
    });
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: testEnv().workflowBundle }, dataConverter: createDataConverter(testEnv().keyring) },
      history,
    );
  });

  describe("the outgoing policy's decision", () => {
    const decision = (action: 'REJECT' | 'SEND_TO_INBOX') => ({
      held: {
        decision: {
          action,
          policy: { vaspDid: originator, versionId: 'v-1', version: 1, contentHash: 'h' },
          rule: { order: 1, actionRule: action, ruleCheck: 'ASSET' as const, ruleValue: 'ETH' },
          reason: `rule 1: ASSET ETH matched ETH → ${action}`,
        },
        facts: {
          direction: 'outgoing' as const,
          vaspDid: originator,
          counterpartyReview: 'UNREVIEWED' as const,
          asset: 'ETH',
          amount: '1',
          createdAt: '2026-11-28T00:00:00.000Z',
        },
      },
    });
    const officer = {
      kind: 'oidc' as const,
      subject: 'u-1',
      name: 'Maya',
      roles: ['compliance' as const],
      credentialId: 'j',
    };

    it('REJECT ends the transfer REFUSED without sending it', async () => {
      const { worker, taskQueue, calls } = await stubWorker(
        env,
        silent({ sendOutgoingTransfer: async () => decision('REJECT') }),
      );
      const args = input();
      const state = await worker.runUntil(
        env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }),
      );
      expect(state).toMatchObject({
        status: 'REFUSED',
        final: true,
        policy: { action: 'REJECT' },
        error: { type: 'PolicyRefused' },
      });
      expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'REFUSED']);
      expect(callsOf(calls, 'sendOutgoingTransfer')).toHaveLength(1);
      expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(0);
    });

    it('SEND_TO_INBOX holds it until a person releases it; the release is audited, then it is sent without deciding again', async () => {
      let first = true;
      const { worker, taskQueue, calls } = await stubWorker(
        env,
        silent({
          sendOutgoingTransfer: async () => {
            if (first) {
              first = false;
              return decision('SEND_TO_INBOX');
            }
            return { plan, created: { ...created, status: 'ACCEPTED' }, view: undefined };
          },
          recordAudit: async () => undefined,
        }),
      );
      const args = input();
      const state = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(outgoingTransfer, {
          taskQueue,
          workflowId: `outgoing-${args.id}`,
          args: [args],
        });
        while ((await handle.query(transferStatusQuery)).status !== 'HELD') await new Promise((r) => setTimeout(r, 20));
        const early = await handle
          .executeUpdate(reviewOutgoingUpdate, {
            args: [{ decision: 'release', reason: '', actor: 'oidc:u-1', principal: officer }],
          })
          .then(
            () => undefined,
            (e: Error) => e,
          );
        expect(early).toBeInstanceOf(WorkflowUpdateFailedError);
        await handle.executeUpdate(reviewOutgoingUpdate, {
          args: [{ decision: 'release', reason: 'known customer', actor: 'oidc:u-1', principal: officer }],
        });
        return handle.result();
      });
      expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'HELD', 'PREPARED', 'ACCEPTED']);
      expect(state).toMatchObject({
        review: { decision: 'release', reason: 'known customer' },
        policy: { action: 'SEND_TO_INBOX' },
      });
      const sends = callsOf(calls, 'sendOutgoingTransfer').map((c) => c.args[0] as { decide?: unknown });
      expect(sends).toHaveLength(2);
      expect(sends[0]!.decide).toBeDefined();
      expect(sends[1]!.decide).toBeUndefined();
      expect(callsOf(calls, 'recordAudit').map((c) => c.args[0])).toEqual([
        expect.objectContaining({ actor: 'oidc:u-1', action: 'outgoing.release', subject: args.id }),
      ]);
    });
  });
});
