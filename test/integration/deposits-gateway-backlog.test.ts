/**
 * Issue 23: a deposit whose transfer waits at the gateway behind a backlog of newer unanswered messages is matched to
 * that transfer, not reported as a second (INCOMPLETE) message: the first check asks for the gateway's unanswered
 * messages to the deposit's address (deposits/deposits.ts atGateway). The chaos run met this in round 2, when the
 * lowered network quota or a busy worker held the gateway's routing back: first past the first page of the whole
 * backlog, then (read page by page) a transfer skipped as others were routed away between two pages. A sandbox of its
 * own, with no webhook registered for the gateway, so the transfers stay at the gateway; the real Temporal server,
 * PostgreSQL and the sandbox over HTTP.
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

  it('finds it behind more than five pages of the gateway’s unanswered messages, and the network holds one message for it', async () => {
    const to = evm();
    const put = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID: g.subA, asset: 'ETH', address: to, customerRef: 'cust-backlog' }],
    });
    expect(put.status).toBe(200);
    const sent = await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: to, amount: ABOVE });
    // 520 newer transfers wait at the gateway too: read newest first, the deposit's is on the sixth page.
    for (let batch = 0; batch < 26; batch++)
      await Promise.all(
        Array.from({ length: 20 }, () =>
          simulateTransfer(sb, { from: g.external, to: g.gateway, destination: evm(), amount: ABOVE }),
        ),
      );

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
