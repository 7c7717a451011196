import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { bearerCall } from '../harness/http';
import { loadSdnList } from '../../screening/load-sdn';
import { createDidKeyRecord } from '../../lib/crypto';
import type { Role } from '../../lib/principal';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
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

const SAMPLE = resolve(__dirname, '../../data/sanctions');
const evm = () => `0x${randomBytes(20).toString('hex')}`;

describe('screening hits and decision reasons: the compliance role reads them, other roles the same records without them (issue 25, item 7a)', () => {
  const g = groupSeed();
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let held: string;

  const api = async (role: Role, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers(role, body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const listRow = async (role: Role, id: string, query: Record<string, string> = {}) => {
    const r = await api(role, 'GET', `/v1/transfers?${new URLSearchParams({ q: id, ...query })}`);
    expect(r.status).toBe(200);
    return (r.body.data as Json[]).find((x) => x.id === id);
  };

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '1h',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
    });
    const gwToken = await sb.token(g.gatewayUser);
    // The group's keys published, so the screening activity can read the originator's name.
    for (const [did, key] of [
      [g.gateway, gatewayKey],
      [g.subA, subAKey],
    ] as const) {
      await bearerCall(sb.url, gwToken, 'POST', '/tf/vasps/update', {
        did,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }],
      });
    }
    await sb.simulateCounterparty(g.external);
    const hook = await bearerCall(sb.url, gwToken, 'POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.body.secret as string;
    await loadSdnList(orch.pool, {
      list: 'visibility-test',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });

    const address = evm();
    expect(
      (
        await api('admin', 'PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: 'c-visibility' }],
        })
      ).status,
    ).toBe(200);
    held = (
      await simulateTransfer(sb, {
        from: g.external,
        to: g.gateway,
        destination: address,
        originatorName: ['Ivan', 'Petrov'],
      })
    ).id;
    await eventually(async () => (await listRow('compliance', held))?.needsReview || undefined, 30_000, 100);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('a held transfer: compliance and admin read its hits in the list, the queue, the row and the status; viewer and operator do not', async () => {
    for (const role of ['compliance', 'admin'] as const) {
      expect((await listRow(role, held, { needs: 'review' }))?.hits.nameHits).toContainEqual(
        expect.objectContaining({ entNum: 900001 }),
      );
      expect((await api(role, 'GET', `/v1/transfers/list/incoming-${held}`)).body.hits.nameHits).toContainEqual(
        expect.objectContaining({ entNum: 900001 }),
      );
      const status = (await api(role, 'GET', `/v1/incoming-transfers/${held}`)).body;
      expect(status.screening.nameHits).toContainEqual(expect.objectContaining({ entNum: 900001 }));
      expect(status.history.find((e: Json) => e.event === 'screened').detail.nameHits).toBeGreaterThanOrEqual(1);
    }
    for (const role of ['viewer', 'operator'] as const) {
      // The same record, so the viewer sees that it waits for review: without the hits.
      const queued = await listRow(role, held, { needs: 'review' });
      expect(queued).toMatchObject({ id: held, needsReview: true, phase: 'awaiting-review', subsidiaryDid: g.subA });
      expect(queued).not.toHaveProperty('hits');
      const one = await api(role, 'GET', `/v1/transfers/list/incoming-${held}`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ workflowId: `incoming-${held}`, needsReview: true });
      expect(one.body).not.toHaveProperty('hits');
      const status = await api(role, 'GET', `/v1/incoming-transfers/${held}`);
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ transactionId: held, phase: 'awaiting-review' });
      expect(status.body).not.toHaveProperty('screening');
      const screened = (status.body.history as Json[]).find((e) => e.event === 'screened');
      expect(screened).toBeDefined();
      expect(screened).not.toHaveProperty('detail');
      expect(JSON.stringify(status.body)).not.toContain('PETROV');
    }
  });

  it('once decided: every role reads the decision and who made it, only compliance and admin the reason', async () => {
    const reason = `confirmed match ${randomBytes(4).toString('hex')}`;
    expect(
      (await api('compliance', 'POST', `/v1/transfers/${held}/decision`, { decision: 'decline', reason })).status,
    ).toBe(200);
    await eventually(async () => (await listRow('compliance', held))?.final || undefined, 30_000, 100);

    const full = await listRow('compliance', held);
    expect(full?.decision).toMatchObject({ decision: 'decline', reason, actor: expect.any(String) });
    const fullStatus = (await api('admin', 'GET', `/v1/incoming-transfers/${held}`)).body;
    expect(fullStatus.decision).toMatchObject({ decision: 'decline', reason });
    expect(fullStatus.history.find((e: Json) => e.event === 'decision').detail).toMatchObject({ reason });

    for (const role of ['viewer', 'operator'] as const) {
      const row = await listRow(role, held);
      expect(row).toMatchObject({ status: 'DECLINED', decision: { decision: 'decline', actor: expect.any(String) } });
      expect(row?.decision).not.toHaveProperty('reason');
      const one = (await api(role, 'GET', `/v1/transfers/list/incoming-${held}`)).body;
      expect(one.decision).toMatchObject({ decision: 'decline' });
      expect(one.decision).not.toHaveProperty('reason');
      const status = (await api(role, 'GET', `/v1/incoming-transfers/${held}`)).body;
      expect(status.decision).toMatchObject({ decision: 'decline', actor: expect.any(String) });
      expect(status.decision).not.toHaveProperty('reason');
      expect(status.history.find((e: Json) => e.event === 'decision').detail).toMatchObject({
        decision: 'decline',
        actor: expect.any(String),
      });
      expect(JSON.stringify(status)).not.toContain(reason);
      expect(JSON.stringify(row)).not.toContain(reason);
    }
  });
});
