import { bearerCall } from '../harness/http';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSdnList } from '../../screening/load-sdn';
import { recordAuditEntry } from '../../audit/store';
import { listTransferViews, writeTransferView } from '../../transfer-view/store';
import type { CursorKey } from '../../lib/listing/cursor';
import { createDidKeyRecord } from '../../lib/crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SAMPLE = resolve(__dirname, '../../data/sanctions');
const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as {
  originator: unknown;
  beneficiary: unknown;
};
const evm = () => `0x${randomBytes(20).toString('hex')}`;

describe('console lists: the transfer list the workflows keep current, address-book runs, key rotations', () => {
  const g = groupSeed();
  const simulated = randomDid();
  g.seed.vasps.push({ did: simulated, name: 'Simulated VASP', simulated: true });
  const gatewayKey = createDidKeyRecord();
  const originatorKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;

  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers('admin', {
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const list = async (query: Record<string, string>) => {
    const r = await api('GET', `/v1/transfers?${new URLSearchParams(query)}`);
    expect(r.status).toBe(200);
    return r.body as { data: Json[]; nextCursor: string | null };
  };
  /** The transfer's row in the list, once `check` holds for it. */
  const row = (id: string, check: (r: Json) => boolean, query: Record<string, string> = {}) =>
    eventually(async () => (await list({ q: id, ...query })).data.find((r) => r.id === id && check(r)), 30_000, 100);

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '1h',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      transfers: { pollIntervalMs: 300, answerDeadlineMs: 60_000 },
    });
    gwToken = await sb.token(g.gatewayUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    await sb.simulateCounterparty(encodeURIComponent(simulated), { default: 'accept' });
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
    await loadSdnList(orch.pool, {
      list: 'console-test',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const send = async (destination: string, originatorName: [string, string]) =>
    (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination, originatorName })).id;
  const register = async (vaspDID: string, address: string) => {
    expect(
      (
        await api('PUT', '/v1/addresses', {
          addresses: [{ vaspDID, asset: 'ETH', address, customerRef: `c-${address.slice(-6)}` }],
        })
      ).status,
    ).toBe(200);
  };

  it('an incoming transfer with a sanctions hit: in the review queue with its hits and deadline, then DECLINED with the decision and who made it', async () => {
    const address = evm();
    await register(g.subA, address);
    const id = await send(address, ['Ivan', 'Petrov']);
    const held = await row(id, (r) => r.needsReview);
    expect(held).toMatchObject({
      direction: 'incoming',
      workflowId: `incoming-${id}`,
      transactionId: id,
      phase: 'awaiting-review',
      status: 'ACK',
      final: false,
      needsRouting: false,
      escalated: false,
      subsidiaryDid: g.subA,
      counterpartyDid: g.external,
      asset: expect.any(String),
      amount: expect.stringMatching(/^\d+$/),
      decision: null,
    });
    expect(held.hits.nameHits[0]).toMatchObject({ entNum: 900001 });
    // The deadline is the review deadline (1h) after the hold.
    expect(Date.parse(held.deadlineAt) - Date.parse(held.updatedAt)).toBeGreaterThan(59 * 60_000);
    // The queue: held transfers, oldest first.
    const queue = await list({ needs: 'review', order: 'asc', subsidiary: g.subA });
    expect(queue.data.map((r) => r.id)).toContain(id);
    expect((await list({ needs: 'routing', q: id })).data).toEqual([]);

    expect(
      (
        await api(
          'POST',
          `/v1/transfers/${id}/decision`,
          { decision: 'decline', reason: 'confirmed match' },
          orch.headers('compliance'),
        )
      ).status,
    ).toBe(200);
    const done = await row(id, (r) => r.final);
    const compliance = (await api('GET', '/v1/me', undefined, orch.headers('compliance'))).body.actor as string;
    expect(done).toMatchObject({
      status: 'DECLINED',
      phase: 'completed',
      needsReview: false,
      decision: {
        decision: 'decline',
        actor: compliance,
        reason: 'confirmed match',
        principal: { kind: 'api-key', name: 'test-compliance', roles: ['compliance'] },
      },
    });
    expect((await list({ needs: 'review', order: 'asc', subsidiary: g.subA })).data.map((r) => r.id)).not.toContain(id);
    expect((await list({ status: 'DECLINED', direction: 'incoming', q: id })).data.map((r) => r.id)).toEqual([id]);
  });

  it('an incoming transfer nobody owns: in the routing queue, then routed to the subsidiary and ACCEPTED', async () => {
    const id = await send(evm(), ['Jane', 'Doe']);
    const waiting = await row(id, (r) => r.needsRouting, { needs: 'routing' });
    expect(waiting).toMatchObject({
      phase: 'awaiting-route',
      subsidiaryDid: null,
      counterpartyDid: g.external,
      needsReview: false,
    });
    expect(
      (await api('POST', `/v1/transfers/${id}/route`, { subsidiaryDid: g.subB, reason: 'customer ticket 7' })).status,
    ).toBe(200);
    expect(await row(id, (r) => r.final)).toMatchObject({
      status: 'ACCEPTED',
      subsidiaryDid: g.subB,
      needsRouting: false,
    });
  });

  it('an outgoing transfer: listed from the moment it is accepted, ACCEPTED once the counterparty answers', async () => {
    const key = randomUUID();
    const r = await api(
      'POST',
      '/v1/transfers',
      {
        transactionAsset: 'ETH',
        transactionAmount: '1000',
        originatorVASPdid: g.subA,
        beneficiaryVASPdid: simulated,
        transactionBlockchainInfo: { destination: evm() },
        originator: fixture.originator,
        beneficiary: fixture.beneficiary,
      },
      { 'idempotency-key': key },
    );
    expect(r.status).toBe(202);
    // Written by the API before it answered: no waiting.
    const first = (await list({ q: key })).data;
    expect(first).toEqual([
      expect.objectContaining({
        id: key,
        direction: 'outgoing',
        reference: key,
        subsidiaryDid: g.subA,
        counterpartyDid: simulated,
        amount: '1000',
        asset: 'ETH',
      }),
    ]);
    const done = await row(key, (x) => x.final);
    expect(done).toMatchObject({ status: 'ACCEPTED', transactionId: expect.any(String) });
    // Found by the network's transaction id as well, and by direction and counterparty.
    expect(
      (await list({ q: done.transactionId, direction: 'outgoing', counterparty: simulated })).data.map((x) => x.id),
    ).toEqual([key]);
  });

  it('rebuilds the list from the network and the running workflows once it is lost', async () => {
    const address = evm();
    await register(g.subB, address);
    const held = await send(address, ['Ivan', 'Petrov']);
    await row(held, (r) => r.needsReview);
    const ours = async () => {
      const rows: Json[] = [];
      for (const counterparty of [g.external, simulated])
        rows.push(...(await list({ counterparty, limit: '200' })).data);
      return rows.sort((a, b) => (a.workflowId < b.workflowId ? -1 : 1));
    };
    const before = await ours();
    expect(before.length).toBeGreaterThanOrEqual(4);
    await orch.pool.query('delete from transfer_view where workflow_id = any($1)', [before.map((r) => r.workflowId)]);
    expect(await ours()).toEqual([]);

    const rebuilt = await api('POST', '/v1/transfers/list/rebuild');
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.body.fromWorkflows).toBeGreaterThanOrEqual(1);
    const after = await ours();
    const essentials = (rows: Json[]) =>
      rows.map((r) => ({
        workflowId: r.workflowId,
        direction: r.direction,
        status: r.status,
        final: r.final,
        subsidiaryDid: r.subsidiaryDid,
        counterpartyDid: r.counterpartyDid,
      }));
    expect(essentials(after)).toEqual(essentials(before));
    // The one still waiting comes back from its workflow, hits and all.
    expect(after.find((r) => r.id === held)).toMatchObject({
      needsReview: true,
      phase: 'awaiting-review',
      hits: { nameHits: expect.arrayContaining([expect.objectContaining({ entNum: 900001 })]) },
    });
    await api('POST', `/v1/transfers/${held}/decision`, { decision: 'approve', reason: 'different person' });
    expect(await row(held, (r) => r.final)).toMatchObject({ status: 'ACCEPTED' });
  });

  it('the audit log is searched by actor, action prefix and subject, paged, and exported as CSV', async () => {
    const subject = `audit-test-${randomUUID()}`;
    const actor = `auditor-${randomUUID()}`;
    for (const action of ['incoming.decline', 'incoming.route', 'key.rotation.requested']) {
      await recordAuditEntry(orch.pool, { actor, action, subject, details: { reason: `why, "quoted", ${action}` } });
    }
    const search = async (query: Record<string, string>) =>
      (await api('GET', `/v1/audit-log?${new URLSearchParams(query)}`)).body;
    expect((await search({ actor })).data.map((r: Json) => r.action)).toEqual([
      'key.rotation.requested',
      'incoming.route',
      'incoming.decline',
    ]);
    expect((await search({ subject, action: 'incoming.' })).data.map((r: Json) => r.action).sort()).toEqual([
      'incoming.decline',
      'incoming.route',
    ]);
    const first = await search({ actor, limit: '2', order: 'asc' });
    const second = await search({ actor, limit: '2', order: 'asc', cursor: first.nextCursor });
    expect([...first.data, ...second.data].map((r: Json) => r.action)).toEqual([
      'incoming.decline',
      'incoming.route',
      'key.rotation.requested',
    ]);
    expect(second.nextCursor).toBeNull();

    const r = await fetch(`${orch.apiUrl}/v1/audit-log/export?${new URLSearchParams({ actor })}`, {
      headers: orch.headers('compliance'),
    });
    expect(r.headers.get('content-type')).toContain('text/csv');
    const csv = await r.text();
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('id,at,actor,actorName,action,subject,details,chain,seq,prevHash,hash');
    expect(lines).toHaveLength(4);
    // No principal in these rows' details, so no name to show beside the actor.
    expect(lines[1]).toContain(
      `${actor},,incoming.decline,${subject},"{""reason"":""why, \\""quoted\\"", incoming.decline""}",incoming,`,
    );
    expect(lines[1]).toMatch(/,incoming,\d+,[0-9a-f]{64},[0-9a-f]{64}$/);
    expect((await api('GET', '/v1/audit-log?from=last-week')).body.error).toMatchObject({ field: 'querystring.from' });
    expect((await api('GET', '/v1/audit-log?action=Incoming%20Decline')).body.error).toMatchObject({
      field: 'querystring.action',
    });
  });

  it('filters combine, pages follow the cursor in a stable order both ways, and bad filters answer 400 naming the parameter', async () => {
    const sub = randomDid();
    const base = Date.parse('2031-01-01T00:00:00Z');
    const rows = Array.from({ length: 7 }, (_, i) => ({
      workflowId: `outgoing-console-${i}-${randomUUID()}`,
      direction: 'outgoing' as const,
      id: `console-${i}`,
      transactionId: null,
      reference: `ref-${i}-zebra`,
      status: i % 2 ? 'ACCEPTED' : 'DECLINED',
      phase: null,
      final: true,
      needsReview: false,
      needsRouting: false,
      escalated: false,
      subsidiaryDid: sub,
      counterpartyDid: g.external,
      asset: i < 5 ? 'ETH' : 'BTC',
      amount: '1',
      hits: null,
      decision: null,
      deadlineAt: null,
      // Two rows share a creation time: the workflow id breaks the tie.
      createdAt: new Date(base + Math.min(i, 5) * 1000),
      version: 1,
    }));
    for (const r of rows) await writeTransferView(orch.pool, r);
    const all = async (query: Record<string, string>) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await list({ ...query, subsidiary: sub, limit: '2', ...(cursor ? { cursor } : {}) });
        ids.push(...page.data.map((r) => r.workflowId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      return ids;
    };
    const byTime = [...rows]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.workflowId < b.workflowId ? -1 : 1))
      .map((r) => r.workflowId);
    expect(await all({ order: 'asc' })).toEqual(byTime);
    expect(await all({})).toEqual([...byTime].reverse());
    expect(await all({ status: 'ACCEPTED', asset: 'ETH' })).toHaveLength(2);
    expect(await all({ status: 'ACCEPTED,DECLINED', asset: 'BTC' })).toHaveLength(2);
    expect(
      await all({ createdFrom: new Date(base + 1000).toISOString(), createdTo: new Date(base + 3000).toISOString() }),
    ).toHaveLength(2);
    expect(await all({ q: 'ZEBRA' })).toHaveLength(7);
    expect(await all({ q: 'ref-3-' })).toEqual([rows[3]!.workflowId]);
    // Free text reads a window of the list's order first and asks the trigram index only when the window holds less
    // than a page: every window size gives the same pages, in both orders.
    for (const order of ['asc', 'desc'] as const) {
      const expected = order === 'asc' ? byTime : [...byTime].reverse();
      for (const textWindow of [1, 2, 3, 5, 100]) {
        const ids: string[] = [];
        let cursor: CursorKey | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await listTransferViews(
            orch.pool,
            { text: 'zebra', subsidiaryDid: sub },
            { limit: 2, order, cursor, textWindow },
          );
          ids.push(...page.rows.map((r) => r.workflowId));
          if (!page.next) break;
          cursor = page.next;
        }
        expect({ order, textWindow, ids }).toEqual({ order, textWindow, ids: expected });
      }
    }
    expect(await all({ direction: 'incoming' })).toEqual([]);

    const bad = async (query: string, field: string) => {
      const r = await api('GET', `/v1/transfers?${query}`);
      expect({ status: r.status, field: r.body.error?.field }).toEqual({ status: 400, field });
    };
    await bad('limit=0', 'querystring.limit');
    await bad('limit=201', 'querystring.limit');
    await bad('limit=ten', 'querystring.limit');
    await bad('cursor=not-a-cursor', 'querystring.cursor');
    await bad(`cursor=${Buffer.from('["yesterday","x"]').toString('base64url')}`, 'querystring.cursor');
    await bad('createdFrom=yesterday', 'querystring.createdFrom');
    await bad('createdFrom=2031-01-02&createdTo=2031-01-01', 'querystring.createdTo');
    await bad('q=ab', 'querystring.q');
    await bad('status=accepted', 'querystring.status');
    await bad('direction=sideways', 'querystring.direction');
    await bad('needs=coffee', 'querystring.needs');
    await bad('subsidiary=acme', 'querystring.subsidiary');
    await bad('colour=red', 'querystring.colour');
    expect((await api('GET', '/v1/address-book/runs?limit=0')).body.error).toMatchObject({
      field: 'querystring.limit',
    });
    expect((await api('GET', '/v1/key-rotations?status=done')).body.error).toMatchObject({
      field: 'querystring.status',
    });
  });

  it('key rotations and address-book runs are listed with their outcome', async () => {
    const rotate = await api(
      'POST',
      `/v1/vasps/${encodeURIComponent(g.subB)}/keys/rotate`,
      { reason: 'console list test' },
      orch.headers('operator'),
    );
    expect(rotate.status).toBe(202);
    const rotation = await eventually(async () => {
      const r = await api('GET', `/v1/key-rotations?vaspDID=${encodeURIComponent(g.subB)}`);
      return r.body.data.find((x: Json) => x.status === 'completed');
    }, 30_000);
    const operator = (await api('GET', '/v1/me', undefined, orch.headers('operator'))).body.actor as string;
    expect(rotation).toMatchObject({
      workflowId: rotate.body.workflowId,
      runId: rotate.body.runId,
      requestedBy: operator,
      reason: 'console list test',
      newDid: expect.stringMatching(/^did:key:/),
    });

    const started = await api('POST', `/v1/address-book/${encodeURIComponent(g.subA)}/reconcile`, {});
    expect(started.status).toBe(202);
    const run = await eventually(async () => {
      const r = await api('GET', `/v1/address-book/runs?vaspDID=${encodeURIComponent(g.subA)}&status=succeeded`);
      return r.body.data[0] as Json | undefined;
    }, 60_000);
    expect(run).toMatchObject({ vaspDid: g.subA, trigger: 'api', workflowId: started.body.workflowId });
  });
});
