/**
 * Issue 23: a deposit whose transfer waits at the gateway behind more than a page (100) of newer unanswered messages
 * is matched to that transfer, not reported as a second (INCOMPLETE) message: the first check reads the gateway's
 * unanswered messages page by page (deposits/deposits.ts atGateway). The chaos run met this in round 2, when the
 * lowered network quota held the gateway's routing back. A sandbox of its own, with no webhook registered for the
 * gateway, so the transfers stay at the gateway; the real Temporal server, PostgreSQL and the sandbox over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { bearerCall, roleCall } from '../harness/http';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

/** 1.5 ETH: above FATF's 1,000 USD threshold at the embedded price table's ETH price. */
const ABOVE = '1500000000000000000';

describe('deposits: a transfer behind a backlog at the gateway is still the deposit’s match (issue 23)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  const evm = () => `0x${randomBytes(20).toString('hex')}`;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 3_600_000, recheckInitialMs: 60_000, recheckMaxMs: 60_000 },
    });
    await sb.simulateCounterparty(g.external);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('reads past the first page of the gateway’s unanswered messages, and the network holds one message for it', async () => {
    const to = evm();
    const put = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID: g.subA, asset: 'ETH', address: to, customerRef: 'cust-backlog' }],
    });
    expect(put.status).toBe(200);
    const sent = await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: to, amount: ABOVE });
    // 100 newer transfers wait at the gateway too: the deposit's is on the second page, newest first.
    for (let i = 0; i < 100; i++)
      await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: evm(), amount: ABOVE });

    const created = await roleCall(orch, 'operator', 'POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      amount: ABOVE,
      to,
    });
    expect(created.status).toBe(201);
    const matched = await eventually(async () => {
      const d = (await roleCall(orch, 'viewer', 'GET', `/v1/deposits/${created.body.id}`)).body;
      return d.transactionId ? d : undefined;
    }, 30_000);
    expect(matched).toMatchObject({ status: 'HELD', transactionId: sent.id, networkStatus: 'SENT' });
    // Nothing reported to the subsidiary: no INCOMPLETE message beside the transfer.
    const token = await sb.token(g.gatewayUser);
    const page = await bearerCall(
      sb.url,
      token,
      'GET',
      `/tx/list?vaspDID=${encodeURIComponent(g.subA)}&txDirection=incoming&resultsPerPage=100`,
    );
    const toSub = (page.body.transactions as { transactionBlockchainInfo?: { destination?: string } }[]).filter(
      (t) => t.transactionBlockchainInfo?.destination === to,
    );
    expect(toSub).toEqual([]);
  });
});
