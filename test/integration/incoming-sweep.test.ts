import { bearerCall } from '../harness/http';
import { randomBytes } from 'node:crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { webhookHeaders } from '../../lib/webhook-signature';
import { createDidKeyRecord } from '../../lib/crypto';
import { ensureIncomingSweepSchedule } from '../../client/incoming-sweep-schedule';
import { removeSchedule } from '../../client/schedules';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { incomingSweep } from '../../workflows';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
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

const evm = () => `0x${randomBytes(20).toString('hex')}`;

/**
 * Lost webhooks (issue 15, item 1): the gateway has no notification webhook at the network here, so every delivery
 * about its transfers is dropped; only the sweep and the webhook route's own recovery can start their workflows.
 */
describe('incoming transfers without their webhook: the sweep, stale claims, misconfiguration', () => {
  const g = groupSeed();
  const gatewayKey = createDidKeyRecord();
  const incoming = {
    routeDeadline: '1h',
    routeGiveUpAfter: '1h',
    reviewDeadline: '1h',
    pollInterval: '1s',
    screeningThreshold: 0.85,
    sweepInterval: '1h',
    sweepMinAge: '0s',
  };
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;

  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  const status = async (id: string) => {
    const r = await fetch(`${orch.apiUrl}/v1/incoming-transfers/${id}`, { headers: orch.headers('viewer') });
    return r.status === 200 ? ((await r.json()) as IncomingStatus) : undefined;
  };
  const until = (id: string, check: (s: IncomingStatus) => boolean) =>
    eventually(
      async () => {
        const s = await status(id);
        return s && check(s) ? s : undefined;
      },
      60_000,
      200,
    );
  const send = async (destination: string) =>
    (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination })).id;
  const deliver = async (secret: string, webhookId: string, tx: Record<string, unknown>, endpoint = g.gateway) => {
    const body = JSON.stringify({
      message: 'notification.transactionUpdated',
      payload: { transaction: tx },
      version: '1',
    });
    return fetch(`${orch.apiUrl}/webhooks/notification/${encodeURIComponent(endpoint)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...webhookHeaders(secret, webhookId, body) },
      body,
    });
  };

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
      incoming,
    });
    gwToken = await sb.token(g.gatewayUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
  });
  afterAll(async () => {
    if (orch) await removeSchedule(orch.client, workflowIds.incomingSweepSchedule);
    await orch?.close();
    await sb?.close();
  });

  it('a transfer whose webhook never arrives is started by the scheduled sweep and decided; a second sweep starts nothing', async () => {
    const address = evm();
    const put = await fetch(`${orch.apiUrl}/v1/addresses`, {
      method: 'PUT',
      headers: orch.headers('operator', { 'content-type': 'application/json' }),
      body: JSON.stringify({ addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: 'cust-sweep' }] }),
    });
    expect(put.status).toBe(200);
    const id = await send(address);
    expect(await status(id)).toBeUndefined();

    expect(
      await ensureIncomingSweepSchedule(
        orch.client,
        { group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] }, taskQueue: orch.taskQueue },
        incoming,
      ),
    ).toBe('created');
    await orch.client.schedule.getHandle(workflowIds.incomingSweepSchedule).trigger();
    await until(id, () => true);

    // While that workflow runs, another sweep lists the transfer again but does not start it twice.
    const again = await orch.client.workflow.execute(incomingSweep, {
      taskQueue: orch.taskQueue,
      workflowId: `sweep-again-${id}`,
      args: [
        {
          transfer: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB], ...incoming },
          minAge: '0s',
          limit: 100,
        },
      ],
    });
    expect(again.started).not.toContain(id);

    const done = await until(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subA, routedBy: 'registry' });
    expect((await sandboxCall('GET', `/tx/info?id=${id}`)).status).toBe('ACCEPTED');
    let runs = 0;
    for await (const _ of orch.client.workflow.list({ query: `WorkflowId = "incoming-${id}"` })) runs += 1;
    expect(runs).toBe(1);
  });

  it('a claim left "processing" by a crash before the hand-over is taken again by the redelivery; a fresh claim is not', async () => {
    const secret = 'whsec_' + randomBytes(32).toString('base64');
    orch.webhooks.notification[g.gateway] = secret;
    const id = await send(evm());
    const tx = { id, status: 'SENT', originatorVASPdid: g.external, beneficiaryVASPdid: g.gateway };
    await orch.pool.query(
      `insert into received_webhooks (webhook_id, received_at, endpoint, transaction_id, status, outcome)
       values ($1, now() - interval '10 minutes', $2, $3, 'SENT', 'processing'), ($4, now(), $2, $3, 'SENT', 'processing')`,
      [`msg_crashed_${id}`, g.gateway, id, `msg_inflight_${id}`],
    );
    const retaken = await deliver(secret, `msg_crashed_${id}`, tx);
    expect(retaken.status).toBe(200);
    expect(await retaken.json()).toMatchObject({ duplicate: false, outcome: 'incoming' });
    await until(id, (s) => s.phase === 'awaiting-route');
    const outcome = await orch.pool.query('select outcome from received_webhooks where webhook_id = $1', [
      `msg_crashed_${id}`,
    ]);
    expect(outcome.rows).toEqual([{ outcome: 'incoming' }]);

    const inflight = await deliver(secret, `msg_inflight_${id}`, tx);
    expect(await inflight.json()).toEqual({ received: true, duplicate: true });
  });

  it('an endpoint without a configured secret answers 5xx (the network delivers again), not a final 401', async () => {
    const unknown = `did:ethr:0x${randomBytes(20).toString('hex')}`;
    const r = await deliver(
      'whsec_' + randomBytes(32).toString('base64'),
      'msg_no_secret',
      { id: '00000000-0000-4000-8000-000000000001', status: 'SENT' },
      unknown,
    );
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(((await r.json()) as Json).error).toMatchObject({
      type: 'ConfigError',
      setting: 'NOTIFICATION_WEBHOOK_SECRETS',
    });
  });
});
