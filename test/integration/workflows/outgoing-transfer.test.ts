import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../../lib/temporal/data-converter';
import { testEnv } from '../../harness/platform';
import type { CreatedTransaction, TransferPlan } from '../../../activities/outgoing-transfers';
import { outgoingTransfer, type OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import { transactionUpdatedSignal, transferStatusQuery } from '../../../workflows/outgoing-transfer.messages';
import { outgoingViewAfterSend } from '../../../workflows/transfer-view';
import { callsOf, firstTaskStartedAt, stubWorker, timersOf, workflowTestEnvironment, type Stubs } from '../../harness/workflow-env';

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
  const originator = 'did:ethr:0x1111111111111111111111111111111111111111';
  const beneficiary = 'did:ethr:0x2222222222222222222222222222222222222222';

  const input = (over: Partial<OutgoingTransferInput> = {}): OutgoingTransferInput => ({
    id: `ref-${randomBytes(4).toString('hex')}`, originatorVaspDid: originator, beneficiaryVaspDid: beneficiary,
    asset: 'ETH', amount: '1', answerDeadlineMs: DEADLINE_MS, pollIntervalMs: POLL_MS, report: true, ...over,
  });
  const plan: TransferPlan = { originatorVaspDid: originator, beneficiaryVaspDid: beneficiary, beneficiaryResolvedBy: 'request', mode: 'end-to-end', recipients: [] };
  const created: CreatedTransaction = { id: 'tx-1', status: 'SENT', beneficiaryVaspDid: beneficiary, transaction: { id: 'tx-1' } as CreatedTransaction['transaction'] };

  /** A counterparty that never answers: every poll says SENT. */
  const silent = (over: Stubs = {}): Stubs => ({
    sendOutgoingTransfer: async (i) => ({ plan, created, view: i.view && outgoingViewAfterSend(i.view, plan, created, false) }),
    finishOutgoingTransfer: async () => ({ viewWritten: true, delivered: true }),
    fetchOutgoingStatus: async () => ({ status: 'SENT' }),
    cancelOutgoingTransaction: async () => ({ status: 'CANCELLED', cancelled: true }),
    recordTransferView: async () => undefined,
    reportTransferStatus: async () => ({ delivered: true }),
    ...over,
  });

  it('polls every interval, and at the deadline cancels the transaction at the network and ends EXPIRED', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent());
    const args = input();
    const { state, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] });
      const state = await handle.result();
      return { state, events: (await handle.fetchHistory()).events ?? [] };
    });

    expect(state.status).toBe('EXPIRED');
    expect(state.final).toBe(true);
    expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'EXPIRED']);
    expect(state.history.at(-1)!.source).toBe('deadline: cancelled at the network');

    // The wait is one timer per poll interval, the last one cut to what is left of the deadline (how many fit depends
    // on how long the steps before took: the deadline counts from the workflow task that created the transaction).
    const timers = timersOf(events);
    expect(timers.length).toBeGreaterThanOrEqual(1);
    expect(timers.length).toBeLessThanOrEqual(3);
    expect(timers.slice(0, -1).every((t) => t.durationMs === POLL_MS)).toBe(true);
    const last = timers.at(-1)!;
    expect(last.durationMs).toBeLessThanOrEqual(POLL_MS);
    expect(timers.reduce((sum, t) => sum + t.durationMs, 0)).toBeLessThanOrEqual(DEADLINE_MS);
    for (const t of timers) expect(t.firedAt! - t.startedAt).toBeGreaterThanOrEqual(t.durationMs - 5);

    // A poll after each timer but the last, then the cancellation once the deadline has passed, then the report.
    // One step prepares and creates (no separate prepare/create, no plan from an API here: the worker plans).
    const sends = callsOf(calls, 'sendOutgoingTransfer');
    expect(sends.map((c) => c.args)).toEqual([[{ id: args.id, view: expect.objectContaining({ status: 'RECEIVED', version: 1 }) }]]);
    expect(callsOf(calls, 'prepareOutgoingTransfer')).toHaveLength(0);
    expect(callsOf(calls, 'createOutgoingTransaction')).toHaveLength(0);
    expect(callsOf(calls, 'fetchOutgoingStatus').map((c) => c.args)).toEqual(timers.slice(1).map(() => [{ transactionId: 'tx-1' }]));
    const cancel = callsOf(calls, 'cancelOutgoingTransaction');
    expect(cancel.map((c) => c.args)).toEqual([[{ transactionId: 'tx-1', reason: 'no answer from the beneficiary VASP before the deadline' }]]);
    // The deadline counts from the workflow's clock when the transaction was created: the time its workflow task started,
    // which the local activities before it do not move (so on a busy machine it can be before the stub's first call).
    const clockAt = firstTaskStartedAt(events);
    expect(cancel[0]!.at - clockAt).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    // Not long after either (generous: the machine may be busy).
    expect(cancel[0]!.at - clockAt).toBeLessThan(DEADLINE_MS + 10_000);
    expect(cancel[0]!.at).toBeGreaterThanOrEqual(last.firedAt! - 5);
    // The last step writes the final list entry and reports, in one local activity.
    const finishes = callsOf(calls, 'finishOutgoingTransfer').map((c) => c.args[0] as { view?: { status: string; version: number }; report?: unknown });
    expect(finishes).toHaveLength(1);
    expect(finishes[0]!.report).toMatchObject({ id: args.id, status: 'EXPIRED', transactionId: 'tx-1', originatorVaspDid: originator, beneficiaryVaspDid: beneficiary, mode: 'end-to-end' });
    expect(finishes[0]!.view).toMatchObject({ status: 'EXPIRED', final: true, version: 4 });
    expect(calls.at(-1)!.name).toBe('finishOutgoingTransfer');
    // The console's list saw the created transaction (written by the send step, which the workflow found current) and
    // the end: no separate list writes.
    expect(callsOf(calls, 'recordTransferView')).toHaveLength(0);
    expect(callsOf(calls, 'reportTransferStatus')).toHaveLength(0);
  });

  it('an answer that beats the cancellation is the outcome', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent({ cancelOutgoingTransaction: async () => ({ status: 'ACCEPTED', cancelled: false }) }));
    const args = input();
    const state = await worker.runUntil(env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }));
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
    const state = await worker.runUntil(env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }));
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
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] });
      // Sent once the transaction exists: an update for another transaction is ignored, this one ends the transfer.
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-other', status: 'DECLINED', source: 'webhook' });
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'ACCEPTED', source: 'webhook', webhookId: 'wh-1' });
      return { state: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(state.status).toBe('ACCEPTED');
    expect(state.history.at(-1)).toMatchObject({ status: 'ACCEPTED', source: 'webhook' });
    expect(callsOf(calls, 'fetchOutgoingStatus')).toHaveLength(0);
    expect(callsOf(calls, 'cancelOutgoingTransaction')).toHaveLength(0);
    const timers = timersOf(events);
    expect(timers[0]).toMatchObject({ durationMs: 60_000, cancelled: true });
    expect(timers.every((t) => t.firedAt === undefined)).toBe(true);
  });

  it('updates that arrive out of order never move the status back: ordered by the network\'s updatedAt, else by progress', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 60_000, answerDeadlineMs: 600_000 });
    const at = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s)).toISOString();
    const { state, seen } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] });
      while (callsOf(calls, 'sendOutgoingTransfer').length === 0) await new Promise((r) => setTimeout(r, 20));
      const send = (status: string, updatedAt?: string) =>
        handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status, source: 'webhook', ...(updatedAt ? { updatedAt } : {}) });
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
    expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'NOT_READY', 'ACK', 'ACCEPTED']);
  });

  it('passes the API\'s plan to the send step, and writes the list entry itself when the send step could not', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, silent({
      sendOutgoingTransfer: async () => ({ plan, created, view: undefined }),
      finishOutgoingTransfer: async () => ({ viewWritten: false, delivered: true }),
      cancelOutgoingTransaction: async () => ({ status: 'ACCEPTED', cancelled: false }),
    }));
    const args = input({ plan, answerDeadlineMs: 1000 });
    const state = await worker.runUntil(env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }));
    expect(state.status).toBe('ACCEPTED');
    expect(callsOf(calls, 'sendOutgoingTransfer')[0]!.args[0]).toMatchObject({ id: args.id, plan });
    // The send step's write failed: SENT written separately; the finish's write failed: ACCEPTED written separately.
    expect(callsOf(calls, 'recordTransferView').map((c) => (c.args[0] as { status: string }).status)).toEqual(['SENT', 'ACCEPTED']);
  });

  it('a history of the one-step path replays through the same code (the send step\'s list entry is compared deterministically)', async () => {
    const { worker, taskQueue } = await stubWorker(env, silent());
    const args = input({ pollIntervalMs: 500, answerDeadlineMs: 1200 });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] });
      await handle.result();
      return handle.fetchHistory();
    });
    await Worker.runReplayHistory({ workflowBundle: { codePath: testEnv().workflowBundle }, dataConverter: createDataConverter(testEnv().keyring) }, history);
  });
});
