import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { BroadcastInput } from '../../../outgoing/types';
import { outgoingTransfer, type OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import {
  transactionUpdatedSignal,
  transferStatusQuery,
  type TransferState,
} from '../../../workflows/outgoing-transfer.messages';
import { stubWorker, timersOf, workflowTestEnvironment, type StubCall, type Stubs } from '../../harness/workflow-env';
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
  type Handle = WorkflowHandle<typeof outgoingTransfer>;

  /**
   * Runs one transfer on a stub worker; once its send step ran, `meanwhile` may look at it and answer for the
   * counterparty. Answers the final state, the history's events and the stubs' calls.
   */
  async function runTransfer(
    over: Stubs,
    args: OutgoingTransferInput,
    meanwhile?: (h: Handle, seen: StubCall[]) => Promise<void>,
  ) {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs(over));
    return worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, {
        taskQueue,
        workflowId: `outgoing-${args.id}`,
        args: [args],
      });
      await untilCalled(calls, 'sendOutgoingTransfer');
      await meanwhile?.(handle, calls);
      return { state: await handle.result(), events: (await handle.fetchHistory()).events ?? [], calls };
    });
  }
  /** The counterparty's final answer, by webhook. */
  const answer = (h: Handle, status: string) =>
    h.signal(transactionUpdatedSignal, { transactionId: 'tx-1', status, source: 'webhook' });
  const announced = (calls: { name: string; args: unknown[] }[]) =>
    calls.filter((c) => c.name === 'deliverTransferCallback').map((c) => c.args[0] as Announced);

  it('on-accepted: nothing while the answer is awaited; ACCEPTED → one transfer.release, retried until acknowledged', async () => {
    let refusals = 2;
    const args = input({ rule: { when: 'on-accepted' }, callback: true });
    let midway: TransferState | undefined;
    const { state, calls } = await runTransfer(
      {
        deliverTransferCallback: async () => {
          if (refusals-- > 0) throw new Error('custody answered 500');
          return { delivered: true };
        },
      },
      args,
      async (h) => {
        await sleep(300);
        midway = await h.query(transferStatusQuery);
        await answer(h, 'ACCEPTED');
      },
    );
    expect(midway?.status).toBe('SENT');
    expect(midway?.broadcast).toBeUndefined();
    expect(state.broadcast).toMatchObject({
      event: 'transfer.release',
      rule: 'on-accepted',
      reason: 'the beneficiary VASP accepted the transfer',
    });
    // The run ended only once the custody system acknowledged: three attempts of one activity, the same message.
    const sent = announced(calls);
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
    const args = input({ rule: { when: 'on-accepted' }, callback: true });
    const { state, calls } = await runTransfer({}, args, (h) => answer(h, 'REJECTED'));
    expect(state.broadcast).toMatchObject({ event: 'transfer.halt', reason: 'the transfer ended REJECTED' });
    expect(announced(calls).map((c) => c.event)).toEqual(['transfer.halt']);
  });

  it('at-once: released as soon as the transaction exists; a later rejection announces nothing more', async () => {
    const args = input({ rule: { when: 'at-once' }, callback: true });
    let midway: TransferState | undefined;
    const { state, calls } = await runTransfer({}, args, async (h, seen) => {
      await untilCalled(seen, 'deliverTransferCallback');
      midway = await h.query(transferStatusQuery);
      await answer(h, 'REJECTED');
    });
    expect(midway).toMatchObject({ status: 'SENT', final: false, broadcast: { event: 'transfer.release' } });
    expect(state.status).toBe('REJECTED');
    expect(state.broadcast).toEqual(midway?.broadcast);
    expect(announced(calls).map((s) => [s.event, s.body.status])).toEqual([['transfer.release', 'SENT']]);
  });

  it('after-timeout: no answer within the timeout → released by a durable timer; the expiry then changes nothing', async () => {
    const args = input({ rule: { when: 'after-timeout', afterMs: 1500 }, callback: true }, { answerDeadlineMs: 4000 });
    const { state, events, calls } = await runTransfer({}, args);
    expect(state.status).toBe('EXPIRED');
    expect(state.broadcast).toMatchObject({
      event: 'transfer.release',
      rule: 'after-timeout:1500ms',
      reason: 'no final answer within 1500ms of sending the Travel Rule data',
    });
    expect(announced(calls).map((c) => c.body.status)).toEqual(['SENT']);
    // The rule's own timer, beside the answer deadline's.
    const timers = timersOf(events);
    expect(timers.find((t) => t.durationMs === 1500)).toMatchObject({ cancelled: false });
    expect(timers.find((t) => t.durationMs === 1500)!.firedAt).toBeDefined();
  });

  it('after-timeout: an answer before the timeout decides: ACCEPTED releases at once, no timer release follows', async () => {
    const args = input({ rule: { when: 'after-timeout', afterMs: 600_000 }, callback: true });
    const { state, calls } = await runTransfer({}, args, (h) => answer(h, 'ACCEPTED'));
    expect(state.broadcast).toMatchObject({ event: 'transfer.release', rule: 'after-timeout:10m' });
    expect(announced(calls)).toHaveLength(1);
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
      const args = input({ rule: { when: 'at-once' }, callback });
      const { state, calls } = await runTransfer({ sendOutgoingTransfer: refuse }, args);
      expect(state.status).toBe('REFUSED');
      expect(state.broadcast).toMatchObject({ event: 'transfer.halt', reason: 'the transfer ended REFUSED' });
      expect(announced(calls)).toHaveLength(callback ? 1 : 0);
    }
  });

  it('a run started without a rule (an API from before) waits for ACCEPTED and sends no callback', async () => {
    const { broadcast: _, ...args } = input({ rule: { when: 'at-once' }, callback: true });
    void _;
    let midway: TransferState | undefined;
    const { state, calls } = await runTransfer({}, args, async (h) => {
      await sleep(200);
      midway = await h.query(transferStatusQuery);
      await answer(h, 'ACCEPTED');
    });
    expect(midway?.broadcast).toBeUndefined();
    expect(state.broadcast).toMatchObject({ event: 'transfer.release', rule: 'on-accepted' });
    expect(announced(calls)).toHaveLength(0);
  });
});
