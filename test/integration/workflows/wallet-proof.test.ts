import { randomBytes } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ProofTransition } from '../../../wallet-proofs/types';
import { walletProof } from '../../../workflows/wallet-proof';
import {
  depositObservedUpdate,
  proofStateQuery,
  reviewProofUpdate,
  type WalletProofInput,
} from '../../../workflows/wallet-proof.messages';
import { callsOf, stubWorker, timersOf, workflowTestEnvironment, type Stubs } from '../../harness/workflow-env';

/**
 * The wallet proof's deadlines as durable timers, with stubbed activities and short durations (the dev server does not
 * skip time; the timers' configured durations and fire times are read from the history): a deposit before the
 * deadline verifies the proof, none expires it, a late one is refused; a review not decided in time is escalated
 * and still decided.
 */
describe('wallet proof workflow: deposit deadline, challenge expiry, review escalation', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const WALLET = '0x2092FF53231f07dAEfF4Af06aa58e09643943922';
  const stubs = (): Stubs => ({
    finishWalletProof: async () => undefined,
    recordWalletProofMismatch: async () => undefined,
    recordAudit: async () => undefined,
    verifyProofSignature: async () => ({ valid: true }),
  });
  const input = (over: Partial<WalletProofInput>): WalletProofInput => ({
    id: `wp-${randomBytes(6).toString('hex')}`,
    method: 'SMALL_DEPOSIT',
    scheme: null,
    asset: 'ETH',
    address: WALLET,
    deadline: new Date(Date.now() + 3000).toISOString(),
    reviewDeadline: '1 hour',
    validDays: 365,
    depositAmount: '333333333333',
    ...over,
  });
  const finished = (calls: { name: string; args: unknown[] }[]) =>
    callsOf(calls as never, 'finishWalletProof').map((c) => c.args[0] as ProofTransition);
  const txHash = `0x${'ab'.repeat(32)}`;

  it('a deposit of the exact amount from the wallet before the deadline verifies the proof; its timer never fires', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ deadline: new Date(Date.now() + 60_000).toISOString() });
    const { state, result, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(walletProof, {
        taskQueue,
        workflowId: `wallet-proof-${args.id}`,
        args: [args],
      });
      const wrong = await handle.executeUpdate(depositObservedUpdate, {
        args: [{ txHash, from: WALLET, amount: '1' }],
      });
      expect(wrong).toMatchObject({ status: 'PENDING', reason: expect.stringMatching(/not the 333333333333/) });
      const state = await handle.executeUpdate(depositObservedUpdate, {
        args: [{ txHash, from: WALLET.toLowerCase(), amount: '333333333333' }],
      });
      return { state, result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(state.status).toBe('VERIFIED');
    expect(result).toMatchObject({ status: 'VERIFIED', phase: 'done' });
    expect(finished(calls)).toEqual([
      expect.objectContaining({ id: args.id, status: 'VERIFIED', validDays: 365, actor: 'system:wallet-proof' }),
    ]);
    expect(callsOf(calls, 'recordWalletProofMismatch')).toHaveLength(1);
    const [timer] = timersOf(events);
    expect(timer).toMatchObject({ cancelled: true });
    expect(timer!.durationMs).toBeGreaterThan(50_000);
  });

  it('no deposit before the deadline: the timer fires, the proof is EXPIRED, and a late deposit is refused', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({});
    const { result, late, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(walletProof, {
        taskQueue,
        workflowId: `wallet-proof-${args.id}`,
        args: [args],
      });
      const result = await handle.result();
      const late = await handle
        .executeUpdate(depositObservedUpdate, { args: [{ txHash, from: WALLET, amount: '333333333333' }] })
        .then(
          () => undefined,
          (e: Error) => e,
        );
      return { result, late, events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ status: 'EXPIRED', reason: expect.stringMatching(/before the deadline/) });
    expect(finished(calls)).toEqual([expect.objectContaining({ status: 'EXPIRED' })]);
    const [timer] = timersOf(events);
    expect(timer!.firedAt).toBeDefined();
    expect(timer!.firedAt! + 1000).toBeGreaterThanOrEqual(Date.parse(args.deadline));
    // The workflow has closed: the late deposit reaches no workflow.
    expect(late).toBeInstanceOf(Error);
  });

  it('a deposit reported before the deadline to a worker far behind verifies the proof, though the deadline passed before the worker took the report', async () => {
    const calls = stubs();
    const first = await stubWorker(env, calls);
    const args = input({ deadline: new Date(Date.now() + 3000).toISOString() });
    const handle = await first.worker.runUntil(async () => {
      const h = await env.client.workflow.start(walletProof, {
        taskQueue: first.taskQueue,
        workflowId: `wallet-proof-${args.id}`,
        args: [args],
      });
      await h.query(proofStateQuery);
      return h;
    });
    // No worker now: the report, received by the API before the deadline, waits at the server past it.
    const reported = handle.executeUpdate(depositObservedUpdate, {
      args: [{ txHash, from: WALLET, amount: '333333333333', receivedAt: new Date().toISOString() }],
    });
    await new Promise((r) => setTimeout(r, Date.parse(args.deadline) - Date.now() + 1500));
    const second = await stubWorker(env, calls, first.taskQueue);
    const { state, result, events } = await second.worker.runUntil(async () => ({
      state: await reported,
      result: await handle.result(),
      events: (await handle.fetchHistory()).events ?? [],
    }));
    expect(state.status).toBe('VERIFIED');
    expect(result).toMatchObject({ status: 'VERIFIED' });
    expect(finished(second.calls)).toEqual([expect.objectContaining({ status: 'VERIFIED' })]);
    // The deadline's timer did fire: the report was taken after it, and judged by its receipt time.
    expect(timersOf(events)[0]!.firedAt).toBeDefined();
  });

  it('a signature challenge nobody answers expires at its expiry', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({ method: 'SIGNATURE', scheme: 'EIP191', depositAmount: null });
    const result = await worker.runUntil(() =>
      env.client.workflow.execute(walletProof, { taskQueue, workflowId: `wallet-proof-${args.id}`, args: [args] }),
    );
    expect(result).toMatchObject({ status: 'EXPIRED', reason: expect.stringMatching(/challenge expired/) });
    expect(finished(calls)).toEqual([expect.objectContaining({ status: 'EXPIRED' })]);
    expect(callsOf(calls, 'verifyProofSignature')).toHaveLength(0);
  });

  it('a screenshot not reviewed by its escalation deadline is escalated (audited), keeps waiting, and is decided', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs());
    const args = input({
      method: 'SCREENSHOT',
      depositAmount: null,
      reviewDeadline: '1 second',
      deadline: new Date(Date.now() + 120_000).toISOString(),
    });
    const principal = { kind: 'oidc', subject: 'user-7', name: 'Maya', roles: ['compliance'], credentialId: 'j' };
    const { decided, result } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(walletProof, {
        taskQueue,
        workflowId: `wallet-proof-${args.id}`,
        args: [args],
      });
      const deadline = Date.now() + 20_000;
      while (!(await handle.query(proofStateQuery)).escalated) {
        if (Date.now() > deadline) throw new Error('not escalated within 20 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      const decided = await handle.executeUpdate(reviewProofUpdate, {
        args: [{ decision: 'approve', reason: 'screen matches', actor: 'oidc:user-7', principal }],
      });
      return { decided, result: await handle.result() };
    });
    expect(decided).toMatchObject({ status: 'VERIFIED', escalated: true });
    expect(result.status).toBe('VERIFIED');
    expect(callsOf(calls, 'recordAudit').map((c) => (c.args[0] as { action: string }).action)).toEqual([
      'wallet-proof.review.escalated',
    ]);
    expect(finished(calls)).toEqual([
      expect.objectContaining({
        status: 'VERIFIED',
        actor: 'oidc:user-7',
        evidence: { reviewedBy: 'oidc:user-7', decision: 'approve' },
      }),
    ]);
  });

  it('a review update to a deposit proof is refused (the API answers 409)', async () => {
    const { worker, taskQueue } = await stubWorker(env, stubs());
    const args = input({ deadline: new Date(Date.now() + 60_000).toISOString() });
    const refused = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(walletProof, {
        taskQueue,
        workflowId: `wallet-proof-${args.id}`,
        args: [args],
      });
      const refused = await handle
        .executeUpdate(reviewProofUpdate, {
          args: [{ decision: 'approve', reason: 'x', actor: 'a', principal: {} }],
        })
        .then(
          () => undefined,
          (e: Error) => e,
        );
      await handle.terminate('test done');
      return refused;
    });
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toMatch(/is a SMALL_DEPOSIT proof/);
  });
});
