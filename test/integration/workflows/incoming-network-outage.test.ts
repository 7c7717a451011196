import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { IncomingTxSummary } from '../../../activities/incoming-transfers';
import { incomingTransfer, type IncomingTransferInput } from '../../../workflows/incoming-transfer';
import type { ScreeningOutcome } from '../../../workflows/incoming-transfer.messages';
import { callsOf, stubWorker, workflowTestEnvironment } from '../../harness/workflow-env';

/**
 * With the network failing a share of calls, a step with an attempt limit (screening makes a few calls to the network
 * per attempt) would fail the workflow and leave the transfer undecided at the network. A network that keeps failing
 * must delay an incoming transfer, never end it.
 */
describe('incoming transfer workflow: a long network outage', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const gateway = 'did:ethr:0x3333333333333333333333333333333333333333';
  const subsidiary = 'did:ethr:0x4444444444444444444444444444444444444444';
  const input = (transactionId: string): IncomingTransferInput => ({
    transactionId,
    gatewayDid: gateway,
    subsidiaryDids: [subsidiary],
    routeDeadline: '1 hour',
    routeGiveUpAfter: '1 day',
    reviewDeadline: '1 hour',
    pollInterval: '10 minutes',
    screeningThreshold: 0.9,
  });
  const tx = (id: string, over: Partial<IncomingTxSummary> = {}): IncomingTxSummary => ({
    id,
    status: 'SENT',
    asset: 'ETH',
    destination: '0xdestination',
    originatorVaspDid: 'did:ethr:0x5555555555555555555555555555555555555555',
    beneficiaryVaspDid: subsidiary,
    amount: '1',
    createdAt: '2026-11-25T10:00:00.000Z',
    ...over,
  });
  const clean: ScreeningOutcome = { screenedNames: 2, nameHits: [], addressHits: [] };
  // The network's 503 as the activities report it; nextRetryDelay keeps the test short (the backoff would take minutes).
  const unavailable = () =>
    ApplicationFailure.create({
      type: 'UpstreamUnavailableError',
      message: 'POST {pii}/get: network answered 503',
      nextRetryDelay: '20 milliseconds',
    });

  it('keeps retrying the network-bound steps past their former attempt limits, then decides the transfer once', async () => {
    let gets = 0;
    let screenings = 0;
    const { worker, taskQueue, calls } = await stubWorker(env, {
      // 25 failures: past the network steps' former 20 attempts and screening's former 10.
      getIncomingTransaction: async (id) => {
        if (++gets <= 25) throw unavailable();
        return tx(id);
      },
      confirmIncomingTransaction: async (id) => tx(id, { status: 'ACK' }),
      screenIncomingTransfer: async () => {
        if (++screenings <= 25) throw unavailable();
        return clean;
      },
      acceptIncomingTransaction: async (id) => tx(id, { status: 'ACCEPTED' }),
      recordAudit: async () => undefined,
      recordTransferView: async () => undefined,
      finishIncomingTransfer: async () => ({ viewWritten: true }),
    });
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id)],
      });
      return handle.result();
    });
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED' });
    expect(screenings).toBe(26);
    expect(callsOf(calls, 'acceptIncomingTransaction')).toHaveLength(1);
  }, 120_000);
});
