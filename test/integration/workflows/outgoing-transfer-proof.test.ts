import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { CreatedTransaction, TransferPlan } from '../../../activities/outgoing-transfers';
import { outgoingTransfer, type OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import { transferStatusQuery } from '../../../workflows/outgoing-transfer.messages';
import { walletProofVerifiedSignal } from '../../../workflows/wallet-proof.messages';
import { callsOf, stubWorker, timersOf, workflowTestEnvironment, type Stubs } from '../../harness/workflow-env';

/**
 * The outgoing transfer's wait for a self-hosted wallet's ownership proof (AWAITING_PROOF), with stubbed activities:
 * each walletProofVerifiedSignal makes it ask the store again, a proof that is not the customer's leaves it waiting,
 * and the answer deadline, a timer of its own, ends the wait EXPIRED with nothing sent and the waiter removed.
 */
describe('outgoing transfer workflow: waiting for the beneficiary wallet proof', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const DEADLINE_MS = 3000;
  const originator = 'did:ethr:0x1111111111111111111111111111111111111111';
  const input = (): OutgoingTransferInput => ({
    id: `ref-${randomBytes(4).toString('hex')}`,
    originatorVaspDid: originator,
    asset: 'ETH',
    amount: '1',
    answerDeadlineMs: DEADLINE_MS,
    pollIntervalMs: 60_000,
    report: false,
  });
  const plan: TransferPlan = {
    originatorVaspDid: originator,
    beneficiaryResolvedBy: 'none',
    mode: 'originator-only',
    recipients: [],
  };
  const created: CreatedTransaction = {
    id: 'tx-1',
    status: 'ACCEPTED',
    transaction: { id: 'tx-1' } as CreatedTransaction['transaction'],
  };
  const base = (over: Stubs): Stubs => ({
    finishOutgoingTransfer: async () => ({ viewWritten: true, delivered: false }),
    recordTransferView: async () => undefined,
    ...over,
  });

  it('waits in AWAITING_PROOF; a signal of a proof it cannot use changes nothing, the next one it can use sends it', async () => {
    let verified = false;
    let sends = 0;
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      base({
        // No proof at first: the policy approved, the wallet's proof is missing.
        sendOutgoingTransfer: async () =>
          sends++ === 0
            ? { awaitingProof: true, policy: { decision: { action: 'APPROVE' } } }
            : { plan, created, view: undefined },
        awaitBeneficiaryProof: async () => ({ verified }),
      }),
    );
    const args = { ...input(), answerDeadlineMs: 600_000 };
    const workflowId = `outgoing-${args.id}`;
    const state = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId, args: [args] });
      const status = async () => (await handle.query(transferStatusQuery)).status;
      while ((await status()) !== 'AWAITING_PROOF') await new Promise((r) => setTimeout(r, 20));
      const checks = () => callsOf(calls, 'awaitBeneficiaryProof').length;
      while (checks() < 1) await new Promise((r) => setTimeout(r, 20));
      // Another customer's proof of the wallet: the store has none of this customer's yet.
      await handle.signal(walletProofVerifiedSignal, { proofId: 'wp-other' });
      while (checks() < 2) await new Promise((r) => setTimeout(r, 20));
      expect(await status()).toBe('AWAITING_PROOF');
      verified = true;
      await handle.signal(walletProofVerifiedSignal, { proofId: 'wp-1' });
      return handle.result();
    });
    expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'AWAITING_PROOF', 'PREPARED', 'ACCEPTED']);
    expect(state.policy).toMatchObject({ action: 'APPROVE' });
    expect(callsOf(calls, 'awaitBeneficiaryProof').map((c) => c.args[0])).toEqual([
      { id: args.id, workflowId },
      { id: args.id, workflowId },
      { id: args.id, workflowId },
    ]);
    // Sent once more after the proof, without deciding again.
    const sent = callsOf(calls, 'sendOutgoingTransfer').map((c) => c.args[0] as { decide?: unknown });
    expect(sent).toHaveLength(2);
    expect(sent[0]!.decide).toBeDefined();
    expect(sent[1]!.decide).toBeUndefined();
  });

  it('no proof before the answer deadline: EXPIRED, nothing sent, the waiter removed', async () => {
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      base({
        sendOutgoingTransfer: async () => ({ awaitingProof: true }),
        awaitBeneficiaryProof: async () => ({ verified: false }),
      }),
    );
    const args = input();
    const workflowId = `outgoing-${args.id}`;
    const { state, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(outgoingTransfer, { taskQueue, workflowId, args: [args] });
      const state = await handle.result();
      return { state, events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(state).toMatchObject({ status: 'EXPIRED', final: true, error: { type: 'OwnershipProofMissing' } });
    expect(state.transactionId).toBeUndefined();
    expect(state.history.map((h) => h.status)).toEqual(['RECEIVED', 'AWAITING_PROOF', 'EXPIRED']);
    expect(callsOf(calls, 'sendOutgoingTransfer')).toHaveLength(1);
    // A look at the store when the wait starts, a last one at the deadline, then the waiter removed.
    expect(callsOf(calls, 'awaitBeneficiaryProof').map((c) => c.args[0])).toEqual([
      { id: args.id, workflowId },
      { id: args.id, workflowId },
      { id: args.id, workflowId, stop: true },
    ]);
    // The deadline is a timer of the answer deadline's length; the hourly re-check's timer gave way to it.
    const timers = timersOf(events);
    expect(timers.find((t) => t.durationMs === DEADLINE_MS)).toMatchObject({ cancelled: false });
    expect(timers.some((t) => t.durationMs === 3_600_000)).toBe(true);
  });
});
