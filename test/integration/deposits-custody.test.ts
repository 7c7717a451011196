/**
 * Issue 23, item 4: a deposit's release or return told to the custody system, and the return's confirmation. A real
 * HTTP receiver (test/harness/custody-receiver.ts) plays the custody system: it verifies each callback's signature with
 * lib/webhook-signature.ts, answers 500 to the first delivery of each event (the retry must come) and 200 after.
 * Against the real Temporal server, PostgreSQL and the sandbox over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { startCustodyReceiver, type CustodyReceiver } from '../harness/custody-receiver';
import { bearerCall, roleCall } from '../harness/http';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ABOVE = '1500000000000000000';
const BELOW = '100000000000000';

describe('deposits: deposit.release and deposit.return callbacks, signed and retried; the return confirmed (issue 23)', () => {
  const g = groupSeed();
  let receiver: CustodyReceiver;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;

  const api = (method: string, path: string, body?: unknown, role: 'operator' | 'viewer' | 'compliance' = 'operator') =>
    roleCall(orch, role, method, path, body);
  const evm = () => `0x${randomBytes(20).toString('hex')}`;
  const ethHash = () => `0x${randomBytes(32).toString('hex')}`;
  const ownAddress = async (vaspDID = g.subA) => {
    const address = evm();
    const r = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID, asset: 'ETH', address, customerRef: `cust-${address.slice(-6)}` }],
    });
    expect(r).toMatchObject({ status: 200, body: { inserted: 1 } });
    return address;
  };
  const deposit = async (id: string) => (await api('GET', `/v1/deposits/${id}`, undefined, 'viewer')).body;
  const until = (id: string, check: (d: Json) => boolean, timeoutMs = 30_000) =>
    eventually(
      async () => {
        const d = await deposit(id);
        return check(d) ? d : undefined;
      },
      timeoutMs,
      200,
    );
  /** The deliveries of one deposit's event, in order. */
  const deliveriesOf = (depositId: string, event: string) =>
    receiver.deliveries.filter((d) => d.body.depositId === depositId && d.body.event === event);
  const audit = async (id: string) =>
    (
      await orch.pool.query<{ actor: string; action: string; details: Json }>(
        'select actor, action, details from audit_log where subject = $1 order by seq',
        [id],
      )
    ).rows;

  beforeAll(async () => {
    receiver = await startCustodyReceiver();
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: {
        matchWindowMs: 120_000,
        dataDeadlineMs: 3_600_000,
        recheckInitialMs: 500,
        recheckMaxMs: 2_000,
      },
      custody: receiver.custody,
    });
    gwToken = await sb.token(g.gatewayUser);
    await sb.simulateCounterparty(g.external);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await receiver?.close();
  });

  it('RELEASED: deposit.release is signed, refused once with 500, delivered again with the same id, and audited once', async () => {
    expect(gwToken).toBeTruthy();
    const to = await ownAddress(g.subB);
    const created = await api('POST', '/v1/deposits', {
      vaspDid: g.subB,
      asset: 'ETH',
      txHash: ethHash(),
      amount: BELOW,
      to,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until(id, (d) => d.status === 'RELEASED');
    const sent = await eventually(async () => {
      const found = deliveriesOf(id, 'deposit.release');
      return found.some((d) => d.answered === 200) ? found : undefined;
    }, 30_000);
    expect(sent.map((d) => [d.verified, d.answered])).toEqual([
      [true, 500],
      [true, 200],
    ]);
    // One message, retried: the receiver de-duplicates on its id.
    expect(new Set(sent.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(sent[0]!.headers['webhook-id']).toBe(`msg_${id}_release`);
    expect(JSON.parse(sent[1]!.raw)).toMatchObject({
      event: 'deposit.release',
      depositId: id,
      vaspDid: g.subB,
      asset: 'ETH',
      amount: BELOW,
      address: to,
      txHash: created.body.txHash,
      decidedBy: 'system:deposit',
    });
    const done = await orch.client.workflow.getHandle(workflowIds.deposit(id)).result();
    expect(done.status).toBe('RELEASED');
    const delivered = (await audit(id)).filter((r) => r.action === 'deposit.callback-delivered');
    expect(delivered).toEqual([
      expect.objectContaining({
        actor: 'system:deposit',
        details: { event: 'deposit.release', webhookId: `msg_${id}_release`, status: 200 },
      }),
    ]);
    // Not returned: its confirmation is refused, naming the status.
    const wrong = await api('POST', `/v1/deposits/${id}/returned`, { txHash: ethHash() });
    expect(wrong).toMatchObject({ status: 409, body: { error: { field: 'id', status: 'RELEASED' } } });
  });

  it('returned by an officer: deposit.return {to: from, amount, asset}; escalation shows in GET; the confirmation makes it RETURNED', async () => {
    const to = await ownAddress();
    const from = evm();
    const configured = await fetch(`${sb.url}/sandbox/counterparties/${g.external}/deposits`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ [to]: 'never' }),
    });
    expect(configured.status).toBe(200);
    const created = await api('POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: ethHash(),
      amount: ABOVE,
      to,
      from,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until(id, (d) => d.status === 'AWAITING_DATA');
    // Before a return is required, a confirmation is refused.
    const early = await api('POST', `/v1/deposits/${id}/returned`, { txHash: ethHash() });
    expect(early).toMatchObject({ status: 409, body: { error: { status: 'AWAITING_DATA' } } });
    const decided = await api(
      'POST',
      `/v1/deposits/${id}/decision`,
      { decision: 'return', reason: 'no data' },
      'compliance',
    );
    expect(decided).toMatchObject({ status: 200, body: { status: 'RETURN_REQUIRED' } });

    const sent = await eventually(async () => {
      const found = deliveriesOf(id, 'deposit.return');
      return found.some((d) => d.answered === 200) ? found : undefined;
    }, 30_000);
    expect(sent.map((d) => [d.verified, d.answered])).toEqual([
      [true, 500],
      [true, 200],
    ]);
    expect(JSON.parse(sent[1]!.raw)).toMatchObject({
      event: 'deposit.return',
      depositId: id,
      to: from,
      amount: ABOVE,
      asset: 'ETH',
      reason: 'no data',
      decidedBy: decided.body.decidedBy,
    });
    // The workflow now waits for the confirmation; the escalation (its timer is 10 business days, tested with the
    // workflow alone) writes escalatedAt once, audited, and it shows in GET.
    const handle = orch.client.workflow.getHandle(workflowIds.deposit(id));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const escalate = orch.activities.escalateReturn;
    expect(await escalate({ id, deadline: '2026-12-14T10:00:00.000Z' })).toEqual({ escalated: true });
    expect(await escalate({ id, deadline: '2026-12-14T10:00:00.000Z' })).toEqual({ escalated: false });
    const escalated = await deposit(id);
    expect(escalated).toMatchObject({ status: 'RETURN_REQUIRED', escalatedAt: expect.any(String) });
    expect((await audit(id)).filter((r) => r.action === 'deposit.return-escalated')).toHaveLength(1);

    // The confirmation: operator only, a hash of the deposit's chain.
    const returned = (body: Json, role: 'operator' | 'viewer' | 'compliance' = 'operator') =>
      api('POST', `/v1/deposits/${id}/returned`, body, role);
    expect((await returned({ txHash: ethHash() }, 'viewer')).status).toBe(403);
    expect((await returned({ txHash: ethHash() }, 'compliance')).status).toBe(403);
    for (const txHash of ['ab'.repeat(32), `0x${'ab'.repeat(31)}`, 'not a hash']) {
      const r = await returned({ txHash });
      expect({ txHash, status: r.status, field: r.body.error?.field }).toEqual({
        txHash,
        status: 400,
        field: 'txHash',
      });
    }
    expect((await returned({})).status).toBe(400);
    expect((await deposit(id)).status).toBe('RETURN_REQUIRED');
    const hash = ethHash().toUpperCase().replace('0X', '0x');
    const confirmed = await returned({ txHash: hash });
    expect(confirmed).toMatchObject({
      status: 200,
      body: { id, status: 'RETURNED', returnTxHash: hash.toLowerCase(), returnedAt: expect.any(String) },
    });
    expect(confirmed.body).toEqual(await deposit(id));
    // The workflow stops waiting.
    expect(await handle.result()).toMatchObject({ status: 'RETURNED' });
    const rows = await audit(id);
    expect(rows.at(-1)).toMatchObject({
      actor: expect.stringMatching(/^apikey:/),
      action: 'deposit.returned',
      details: { from: 'RETURN_REQUIRED', to: 'RETURNED', txHash: hash.toLowerCase() },
    });
    expect(rows.filter((r) => r.action === 'deposit.callback-delivered')).toHaveLength(1);
    // Confirmed once: again is a 409 naming RETURNED; an unknown deposit 404.
    expect(await returned({ txHash: ethHash() })).toMatchObject({
      status: 409,
      body: { error: { status: 'RETURNED' } },
    });
    expect((await api('POST', '/v1/deposits/dep-nothing/returned', { txHash: ethHash() })).status).toBe(404);
  });
});
