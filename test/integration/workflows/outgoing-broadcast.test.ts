import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { BroadcastInput } from '../../../outgoing/types';
import { outgoingTransfer, type OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import { transactionUpdatedSignal, transferStatusQuery } from '../../../workflows/outgoing-transfer.messages';
import { callsOf, stubWorker, timersOf, workflowTestEnvironment, type Stubs } from '../../harness/workflow-env';
import { silentCounterparty, STUB_BENEFICIARY, STUB_ORIGINATOR } from '../../harness/outgoing-stubs';

/**
 * Issue 23 item 5: when the custody system may broadcast an outgoing transfer's funds, by the sending subsidiary's
 * rule, announced once per transfer as transfer.release or transfer.halt (outgoing/status.ts broadcastDue), with stubbed
 * activities: which announcement, when, delivered by an activity retried until acknowledged while the wait goes on.
 */
describe('outgoing transfer workflow: transfer.release / transfer.halt by the broadcast rule', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const originator = STUB_ORIGINATOR;
  const beneficiary = STUB_BENEFICIARY;
  const input = (broadcast: BroadcastInput, over: Partial<OutgoingTransferInput> = {}): OutgoingTransferInput => ({
    id: `ref-${randomBytes(4).toString('hex')}`,
    originatorVaspDid: originator,
    beneficiaryVaspDid: beneficiary,
    asset: 'ETH',
    amount: '1',
    answerDeadlineMs: 60_000,
    pollIntervalMs: 60_000,
    report: false,
    broadcast,
    ...over,
  });
  const stubs = (over: Stubs = {}): Stubs =>
    silentCounterparty({ finishOutgoingTransfer: async () => ({ viewWritten: true, delivered: false }), ...over });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const untilCalled = async (calls: { name: string }[], name: string, n = 1) => {
    for (let i = 0; i < 1500 && calls.filter((c) => c.name === name).length < n; i++) await sleep(20);
  };
  type Announced = { id: string; event: string; body: Record<string, unknown> };

  it('on-accepted: nothing while the answer is awaited; ACCEPTED → one transfer.release, retried until acknowledged', async () => {
    let refusals = 2;
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      stubs({
        deliverTransferCallback: async () => {
          if (refusals-- > 0) throw new Error('custody answered 500');
          return { delivered: true };
        },
      }),
    );
    const args = input({ rule: { when: 'on-accepted' }, callback: true });
    const { state, midway } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'sendOutgoingTransfer');
      await sleep(300);
      const midway = await handle.query(transferStatusQuery);
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'ACCEPTED', source: 'webhook' });
      return { state: await handle.result(), midway };
    });
    expect(midway.status).toBe('SENT');
    expect(midway.broadcast).toBeUndefined();
    expect(state.broadcast).toMatchObject({
      event: 'transfer.release',
      rule: 'on-accepted',
      reason: 'the beneficiary VASP accepted the transfer',
    });
    // The run ended only once the custody system acknowledged: three attempts of one activity, the same message.
    const sent = callsOf(calls, 'deliverTransferCallback').map((c) => c.args[0] as Announced);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((s) => JSON.stringify(s))).size).toBe(1);
    expect(sent[0]).toEqual({
      id: args.id,
      event: 'transfer.release',
      body: {
        event: 'transfer.release',
        transferId: args.id,
        vaspDid: originator,
        beneficiaryVaspDid: beneficiary,
        asset: 'ETH',
        amount: '1',
        transactionId: 'tx-1',
        status: 'ACCEPTED',
        rule: 'on-accepted',
        reason: 'the beneficiary VASP accepted the transfer',
        decidedAt: state.broadcast!.at,
      },
    });
  });

  it('on-accepted: a REJECTED answer → transfer.halt', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ rule: { when: 'on-accepted' }, callback: true });
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'sendOutgoingTransfer');
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'REJECTED', source: 'webhook' });
      return handle.result();
    });
    expect(state.broadcast).toMatchObject({ event: 'transfer.halt', reason: 'the transfer ended REJECTED' });
    expect(callsOf(calls, 'deliverTransferCallback').map((c) => (c.args[0] as Announced).event)).toEqual([
      'transfer.halt',
    ]);
  });

  it('at-once: released as soon as the transaction exists; a later rejection announces nothing more', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ rule: { when: 'at-once' }, callback: true });
    const { state, midway } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'deliverTransferCallback');
      const midway = await handle.query(transferStatusQuery);
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'REJECTED', source: 'webhook' });
      return { state: await handle.result(), midway };
    });
    expect(midway).toMatchObject({ status: 'SENT', final: false, broadcast: { event: 'transfer.release' } });
    expect(state.status).toBe('REJECTED');
    expect(state.broadcast).toEqual(midway.broadcast);
    const sent = callsOf(calls, 'deliverTransferCallback').map((c) => c.args[0] as Announced);
    expect(sent.map((s) => [s.event, s.body.status])).toEqual([['transfer.release', 'SENT']]);
  });

  it('after-timeout: no answer within the timeout → released by a durable timer; the expiry then changes nothing', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ rule: { when: 'after-timeout', afterMs: 1500 }, callback: true }, { answerDeadlineMs: 4000 });
    const { state, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      return { state: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(state.status).toBe('EXPIRED');
    expect(state.broadcast).toMatchObject({
      event: 'transfer.release',
      rule: 'after-timeout:1500ms',
      reason: 'no final answer within 1500ms of sending the Travel Rule data',
    });
    expect(callsOf(calls, 'deliverTransferCallback').map((c) => (c.args[0] as Announced).body.status)).toEqual([
      'SENT',
    ]);
    // The rule's own timer, beside the answer deadline's.
    const timers = timersOf(events);
    expect(timers.find((t) => t.durationMs === 1500)).toMatchObject({ cancelled: false });
    expect(timers.find((t) => t.durationMs === 1500)!.firedAt).toBeDefined();
  });

  it('after-timeout: an answer before the timeout decides: ACCEPTED releases at once, no timer release follows', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ rule: { when: 'after-timeout', afterMs: 600_000 }, callback: true });
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'sendOutgoingTransfer');
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'ACCEPTED', source: 'webhook' });
      return handle.result();
    });
    expect(state.broadcast).toMatchObject({ event: 'transfer.release', rule: 'after-timeout:10m' });
    expect(callsOf(calls, 'deliverTransferCallback')).toHaveLength(1);
  });

  it('a transfer the policy refuses is halted, whatever the rule, and without a callback URL only the state says so', async () => {
    const refuse: Stubs['sendOutgoingTransfer'] = async () => ({
      held: {
        decision: {
          action: 'REJECT',
          policy: { vaspDid: originator, versionId: 'v-1', version: 1, contentHash: 'h' },
          rule: { order: 1, actionRule: 'REJECT', ruleCheck: 'ASSET', ruleValue: 'ETH' },
          reason: 'rule 1',
        },
        facts: {
          direction: 'outgoing',
          vaspDid: originator,
          counterpartyReview: 'UNREVIEWED',
          asset: 'ETH',
          amount: '1',
          createdAt: '2026-11-28T00:00:00.000Z',
        },
      },
    });
    for (const callback of [true, false]) {
      const { worker, taskQueue, calls } = await stubWorker(env, stubs({ sendOutgoingTransfer: refuse }));
      const args = input({ rule: { when: 'at-once' }, callback });
      const state = await worker.runUntil(
        env.client.workflow.execute(outgoingTransfer, { taskQueue, workflowId: `outgoing-${args.id}`, args: [args] }),
      );
      expect(state.status).toBe('REFUSED');
      expect(state.broadcast).toMatchObject({ event: 'transfer.halt', reason: 'the transfer ended REFUSED' });
      expect(callsOf(calls, 'deliverTransferCallback')).toHaveLength(callback ? 1 : 0);
    }
  });

  it('a run started without a rule (an API from before) waits for ACCEPTED and sends no callback', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const { broadcast: _, ...args } = input({ rule: { when: 'at-once' }, callback: true });
    void _;
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'sendOutgoingTransfer');
      await sleep(200);
      expect((await handle.query(transferStatusQuery)).broadcast).toBeUndefined();
      await handle.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status: 'ACCEPTED', source: 'webhook' });
      return handle.result();
    });
    expect(state.broadcast).toMatchObject({ event: 'transfer.release', rule: 'on-accepted' });
    expect(callsOf(calls, 'deliverTransferCallback')).toHaveLength(0);
  });
});
