import { bearerCall } from '../harness/http';
import { randomBytes } from 'node:crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { resolve } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { loadSdnList } from '../../screening/load-sdn';
import { webhookHeaders } from '../../lib/webhook-signature';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import {
  eventually,
  groupSeed,
  operatorSeed,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { payloadsIn } from '../harness/history';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/callback-receiver';
import { EncryptionCodec } from '../../lib/temporal/codec';
import { defaultPayloadConverter } from '@temporalio/common';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SAMPLE = resolve(__dirname, '../../data/sanctions');
// Random addresses: the registry is shared by every suite of the run, and an address has one owner in it.
const evm = (_label: string) => `0x${randomBytes(20).toString('hex')}`;

describe('incoming transfers at the gateway: routing, confirm, screening, review', () => {
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  const gatewayKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;
  /** The internal systems' TRANSFER_CALLBACK_URL. */
  let callbacks: CallbackReceiver;
  const reportsOf = (id: string) => callbacks.deliveries.filter((d) => d.body.transactionId === id);

  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  /** The API as the admin's API key, or with the given bearer credential. */
  const api = (method: string, path: string, body?: unknown, token = orch.apiKeys.admin) =>
    bearerCall(orch.apiUrl, token, method, path, body);
  const register = async (vaspDID: string, address: string) => {
    const r = await api('PUT', '/v1/addresses', {
      addresses: [{ vaspDID, asset: 'ETH', address, customerRef: `cust-${address.slice(-4)}` }],
    });
    expect(r).toMatchObject({ status: 200, body: { inserted: 1 } });
  };
  const send = async (destination: string, originatorName: [string, string] = ['Jane', 'Doe']) =>
    (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination, originatorName })).id;
  const status = async (id: string) => {
    const r = await api('GET', `/v1/incoming-transfers/${id}`);
    return r.status === 200 ? (r.body as IncomingStatus) : undefined;
  };
  const until = (id: string, check: (s: IncomingStatus) => boolean, timeoutMs = 30_000) =>
    eventually(
      async () => {
        const s = await status(id);
        return s && check(s) ? s : undefined;
      },
      timeoutMs,
      100,
    );

  beforeAll(async () => {
    callbacks = await startCallbackReceiver();
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      transfers: { callbackUrl: callbacks.url },
      agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
      incoming: {
        routeDeadline: '3s',
        routeGiveUpAfter: '1h',
        reviewDeadline: '3s',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      // People sign in at the identity provider (the sandbox's, verified as a real one is); services use API keys.
      auth: sandboxOidc(sb),
    });
    gwToken = await sb.token(g.gatewayUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
    const addressHook = await sandboxCall('POST', `/integrations/${g.subB}/address-query-webhook`, {
      url: `${orch.apiUrl}/webhooks/address/${g.subB}`,
      params: '?',
    });
    orch.webhooks.address[g.subB] = addressHook.secret as string;
    await loadSdnList(orch.pool, {
      list: 'incoming-test',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await callbacks?.close();
  });

  it('path 1 — the subsidiary’s address book at the network: redirected and confirmed there, screened clear, accepted', async () => {
    const address = evm('a1');
    await register(g.subA, address);
    await sandboxCall('POST', '/address/registerCustomer', {
      vaspDID: g.subA,
      asset: 'ETH',
      address,
      customerRef: 'alice',
    });
    const id = await send(address);
    const done = await until(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subA, escalated: false });
    expect(done.screening).toMatchObject({ screenedNames: 1, nameHits: [], addressHits: [] });
    expect((await sandboxCall('GET', `/tx/info?id=${id}`)).status).toBe('ACCEPTED');
    // The outcome reached the internal systems once the transfer completed. Screening is a local activity
    // (incoming-local-screening); the report, which writes the list's last entry too (incoming-lean-finish), is the
    // run's only activity task.
    // A retry of the report would carry the same key.
    expect(await eventually(async () => (reportsOf(id).length > 0 ? reportsOf(id) : undefined))).toEqual([
      {
        body: {
          direction: 'incoming',
          transactionId: id,
          outcome: 'accepted',
          networkStatus: 'ACCEPTED',
          subsidiaryDid: g.subA,
        },
        idempotencyKey: `incoming-${id}:accepted`,
        answered: 204,
      },
    ]);
    const history = await orch.client.workflow.getHandle(`incoming-${id}`).fetchHistory();
    expect(history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [])).toEqual([
      'finishIncomingTransfer',
    ]);
    // incoming-lean-upserts: the webhook's status is said with the asset after the first read, NeedsReview only once.
    const upserts = history.events!.flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      return fields ? [Object.keys(fields).sort()] : [];
    });
    expect(upserts.filter((keys) => keys.includes('NeedsReview'))).toEqual([
      ['Asset', 'NeedsReview', 'TransferStatus'],
    ]);
    const { typedSearchAttributes } = await orch.client.workflow.getHandle(`incoming-${id}`).describe();
    expect(Object.fromEntries(typedSearchAttributes.getAll().map((a) => [a.key.name, a.value]))).toMatchObject({
      TransferStatus: 'ACCEPTED',
      NeedsReview: false,
      Asset: 'ETH',
      SubsidiaryVaspDid: g.subA,
    });
  });

  it('path 2 — the subsidiary’s address webhook answers from the registry: redirected by the network, accepted', async () => {
    const address = evm('b2');
    await register(g.subB, address);
    const id = await send(address);
    const done = await until(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subB, routedBy: 'network' });
  });

  it('path 3 — the notification webhook: the workflow finds the owner in the registry, redirects and confirms', async () => {
    const address = evm('c3');
    await register(g.subA, address);
    const id = await send(address);
    const done = await until(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subA, routedBy: 'registry' });
    const tx = await sandboxCall('GET', `/tx/info?id=${id}`);
    expect(tx.actions.map((a: { action: string }) => a.action)).toEqual(
      expect.arrayContaining(['redirect', 'confirm', 'accept']),
    );
  });

  it('path 4 — nobody owns the address: a person routes it (validated), after the deadline escalated', async () => {
    const unknownAddress = evm('d4');
    const id = await send(unknownAddress);
    const waiting = await until(id, (s) => s.phase === 'awaiting-route');
    expect(waiting.networkStatus).toBe('SENT');
    expect(
      (await api('POST', `/v1/transfers/${id}/route`, { subsidiaryDid: g.external, reason: 'x' })).body.error,
    ).toMatchObject({ field: 'subsidiaryDid', rule: 'is not a subsidiary of the group' });
    expect((await api('POST', `/v1/transfers/${id}/decision`, { decision: 'approve', reason: 'x' })).status).toBe(409);
    expect((await until(id, (s) => s.escalated)).history.map((h) => h.event)).toContain('route-escalated');
    const routed = await api('POST', `/v1/transfers/${id}/route`, {
      subsidiaryDid: g.subB,
      reason: 'customer ticket 42',
    });
    expect(routed.status).toBe(200);
    const done = await until(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subB, routedBy: 'person' });
    const audit = await orch.pool.query(
      'select actor, action, details from audit_log where subject = $1 order by seq',
      [id],
    );
    expect(audit.rows).toEqual([
      expect.objectContaining({
        actor: 'system:routing',
        action: 'incoming.route.escalated',
        details: expect.objectContaining({ principal: expect.objectContaining({ kind: 'system' }) }),
      }),
      expect.objectContaining({
        actor: (await api('GET', '/v1/me')).body.actor,
        action: 'incoming.route',
        details: expect.objectContaining({
          principal: expect.objectContaining({ kind: 'api-key', name: 'test-admin' }),
        }),
      }),
      expect.objectContaining({
        actor: 'system:screening',
        action: 'incoming.approve',
        details: expect.objectContaining({ reason: 'no screening hit', nameHits: 0 }),
      }),
    ]);
    // The address the person routed joins the registry, so reconciliation keeps it in the subsidiary's address book.
    const listed = await api(
      'GET',
      `/v1/addresses?vaspDID=${encodeURIComponent(g.subB)}&customerRef=${encodeURIComponent(`routed:${id}`)}`,
    );
    expect(listed.body.data).toEqual([expect.objectContaining({ address: unknownAddress, vaspDID: g.subB })]);
  });

  it('a sanctions hit holds the transfer for review; approve accepts it, decline declines it, both audited under who decided', async () => {
    const a = evm('e5');
    const b = evm('e6');
    await register(g.subA, a);
    await register(g.subA, b);
    const approved = await send(a, ['Ivan', 'Petrov']);
    const declined = await send(b, ['Vanya', 'Petrov']);
    for (const id of [approved, declined]) {
      const held = await until(id, (s) => s.phase === 'awaiting-review');
      expect(held.screening!.nameHits[0]).toMatchObject({ entNum: 900001 });
      // The status (and so workflow history) carries the list's entry; the customer's personal data stays out.
      expect(JSON.stringify(held)).not.toContain('1981-03-12');
      expect(JSON.stringify(held)).not.toContain('Example City');
    }
    // The compliance officer signs in at the identity provider; who decides comes from the token, never the body.
    const mlro = await sb.operatorToken(operators.compliance);
    const named = await api(
      'POST',
      `/v1/transfers/${declined}/decision`,
      { decision: 'decline', reason: 'confirmed match', actor: 'someone-else' },
      mlro,
    );
    expect(named).toMatchObject({
      status: 400,
      body: { error: { field: 'actor', rule: expect.stringMatching(/authenticated caller/) } },
    });
    expect(
      (
        await api(
          'POST',
          `/v1/transfers/${approved}/decision`,
          { decision: 'approve', reason: 'false positive: different DOB' },
          await sb.operatorToken(operators.viewer),
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await api(
          'POST',
          `/v1/transfers/${approved}/decision`,
          { decision: 'approve', reason: 'false positive: different DOB' },
          mlro,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await api(
          'POST',
          `/v1/transfers/${declined}/decision`,
          { decision: 'decline', reason: 'confirmed match' },
          mlro,
        )
      ).status,
    ).toBe(200);
    expect(await until(approved, (s) => s.phase === 'completed')).toMatchObject({ networkStatus: 'ACCEPTED' });
    const done = await until(declined, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'DECLINED' });

    const jti = JSON.parse(Buffer.from(mlro.split('.')[1]!, 'base64url').toString()).jti as string;
    const principal = {
      kind: 'oidc',
      subject: operators.compliance.subject,
      name: 'Maya Compliance',
      roles: ['compliance'],
      credentialId: jti,
    };
    // The workflow's state (its query) and its history: the update's input as recorded, decoded with the codec.
    // Recorded as the provider's subject; the name is the principal's, for display.
    const maya = `oidc:${operators.compliance.subject}`;
    expect(done.decision).toMatchObject({ decision: 'decline', actor: maya, principal });
    expect(done.history.find((h) => h.event === 'decision')!.detail).toMatchObject({ principal });
    const history = await orch.client.workflow.getHandle(`incoming-${declined}`).fetchHistory();
    const accepted = history.events!.find(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes,
    )!.workflowExecutionUpdateAcceptedEventAttributes!;
    const [input] = await new EncryptionCodec(testEnv().keyring).decode(
      payloadsIn(accepted.acceptedRequest!.input!.args) as never,
    );
    expect(defaultPayloadConverter.fromPayload(input!)).toMatchObject({ decision: 'decline', principal });
    // The network's record: the decline's reason names who declined, with role and credential.
    const tx = await sandboxCall('GET', `/tx/info?id=${declined}`);
    const decline = tx.actions.find((a: Json) => a.action === 'decline');
    expect(decline.actionData).toBe(
      `confirmed match (declined by Maya Compliance (compliance; oidc ${operators.compliance.subject}; credential ${jti}))`,
    );
    // The audit rows.
    const audit = await orch.pool.query(
      'select subject, actor, action, details from audit_log where subject = any($1) order by seq',
      [[approved, declined]],
    );
    const decided = audit.rows.filter((r) => r.action === 'incoming.approve' || r.action === 'incoming.decline');
    expect(decided.map((r) => r.action).sort()).toEqual(['incoming.approve', 'incoming.decline']);
    for (const row of decided) expect(row).toMatchObject({ actor: maya, details: { principal } });
    // Before them, the registry's routing and the screening hit, automatic decisions under their rules.
    expect(audit.rows.filter((r) => r.subject === declined).map((r) => [r.actor, r.action])).toEqual([
      ['system:routing', 'incoming.route.auto'],
      ['system:screening', 'incoming.screening.hit'],
      [maya, 'incoming.decline'],
    ]);
  });

  it('a review nobody decides escalates after its deadline and still waits for a person', async () => {
    const address = evm('f7');
    await register(g.subB, address);
    const id = await send(address, ['Maria Fernanda', 'Silva']);
    const escalated = await until(id, (s) => s.escalated && s.phase === 'awaiting-review');
    expect(escalated.history.map((h) => h.event)).toContain('review-escalated');
    await api('POST', `/v1/transfers/${id}/decision`, { decision: 'decline', reason: 'match' });
    expect(await until(id, (s) => s.phase === 'completed')).toMatchObject({ networkStatus: 'DECLINED' });
    // The internal systems heard of the escalation (an activity of its own) and then of the outcome.
    const reports = await eventually(async () => (reportsOf(id).length >= 2 ? reportsOf(id) : undefined));
    expect(reports.map((r) => r.body.outcome)).toEqual(['review-escalated', 'declined']);
  });

  it('decrypts with a retired key: data encrypted before a rotation is still screened', async () => {
    const id = await send(evm('a8'), ['Ivan', 'Petrov']);
    await until(id, (s) => s.phase === 'awaiting-route');
    const rotated = createDidKeyRecord();
    await orch.keystore.importKey(g.gateway, rotated, { actor: 'test', reason: 'rotation' });
    const keys = await orch.keystore.loadKeyring(g.gateway);
    expect(keys!.dids).toEqual(expect.arrayContaining([gatewayKey.did, rotated.did]));
    await api('POST', `/v1/transfers/${id}/route`, { subsidiaryDid: g.subA, reason: 'ticket' });
    const held = await until(id, (s) => s.phase === 'awaiting-review');
    expect(held.screening).toMatchObject({ screenedNames: 1 });
    expect(held.screening!.nameHits[0]).toMatchObject({ entNum: 900001 });
  });

  it('malformed personal data from the counterparty holds the transfer for review with the reason, instead of failing it', async () => {
    const address = evm('m1');
    await register(g.subA, address);
    const extToken = await sb.token(g.externalUser);
    const ext = async (path: string, body?: unknown) => {
      const r = await fetch(`${sb.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${extToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(r.ok).toBe(true);
      return (await r.json()) as Json;
    };
    // A flattened key no IVMS101 path has: the personal data cannot be parsed.
    const created = await ext('/tx/create', {
      transactionAsset: 'ETH',
      transactionAmount: '1000',
      originatorVASPdid: g.external,
      beneficiaryVASPdid: g.gateway,
      transactionBlockchainInfo: { origin: '0x5555555555555555555555555555555555555555', destination: address },
      pii: { originator: { 'Jane Doe 1981-03-12': 'x' } },
    });
    if (created.status === 'NEW') await ext(`/tx/approve?id=${created.id}`);
    const held = await until(created.id, (s) => s.phase === 'awaiting-review');
    expect(held.screening).toMatchObject({
      screenedNames: 0,
      skipped: 'unreadable',
      unreadableReason: 'ValidationError: is not a valid field name',
    });
    expect(JSON.stringify(held)).not.toContain('Jane Doe');
    expect(JSON.stringify(held)).not.toContain('1981-03-12');
    await api('POST', `/v1/transfers/${created.id}/decision`, {
      decision: 'decline',
      reason: 'unreadable personal data',
    });
    expect(await until(created.id, (s) => s.phase === 'completed')).toMatchObject({ networkStatus: 'DECLINED' });
  });

  it('duplicate, out-of-order and late webhooks change nothing', async () => {
    const deliver = async (webhookId: string, tx: Record<string, unknown>) => {
      const body = JSON.stringify({
        message: 'notification.transactionUpdated',
        payload: { transaction: tx },
        version: '1',
      });
      const r = await fetch(`${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...webhookHeaders(orch.webhooks.notification[g.gateway]!, webhookId, body),
        },
        body,
      });
      expect(r.status).toBe(200);
      return (await r.json()) as { duplicate: boolean; outcome?: string };
    };
    // A transfer held for review (at ACK): an older SENT arriving late does not move it back.
    const address = evm('a9');
    await register(g.subA, address);
    const held = await send(address, ['Omar Farooq', 'Khan']);
    const before = await until(held, (s) => s.phase === 'awaiting-review');
    const updates = (s: { history: { event: string }[] }) =>
      s.history.filter((h) => h.event === 'network-update').length;
    // Known to the workflow (its list entry shows ACK): recorded and acknowledged, no signal, no workflow task.
    const stale = { id: held, status: 'SENT', originatorVASPdid: g.external, beneficiaryVASPdid: g.gateway };
    expect(await deliver(`msg_stale_${held}`, stale)).toMatchObject({ duplicate: false, outcome: 'known' });
    expect(await deliver(`msg_stale_${held}`, stale)).toEqual({ received: true, duplicate: true });
    expect(await deliver(`msg_ack_${held}`, { ...stale, status: 'ACK', beneficiaryVASPdid: g.subA })).toMatchObject({
      outcome: 'known',
    });
    const recorded = await orch.pool.query(
      'select outcome from received_webhooks where webhook_id = any($1) order by webhook_id',
      [[`msg_stale_${held}`, `msg_ack_${held}`]],
    );
    expect(recorded.rows).toEqual([{ outcome: 'known' }, { outcome: 'known' }]);
    const after = await until(held, () => true);
    expect(after).toMatchObject({ phase: 'awaiting-review', networkStatus: 'ACK' });
    expect(updates(after)).toBe(updates(before));
    // A webhook about a finished transfer does not start it again.
    await api('POST', `/v1/transfers/${held}/decision`, { decision: 'approve', reason: 'different person' });
    await until(held, (s) => s.phase === 'completed');
    // The query says completed while the workflow still reports its outcome; "late" means after it has closed.
    await orch.client.workflow.getHandle(`incoming-${held}`).result();
    expect(
      await deliver(`msg_late_${held}`, { ...stale, status: 'ACCEPTED', beneficiaryVASPdid: g.subA }),
    ).toMatchObject({ outcome: 'known' });
    expect(
      await deliver(`msg_later_${held}`, { ...stale, status: 'CANCELLED', beneficiaryVASPdid: g.subA }),
    ).toMatchObject({ outcome: 'late' });
    const runs = await orch.client.workflow.list({ query: `WorkflowId = "incoming-${held}"` });
    let count = 0;
    for await (const _ of runs) count += 1;
    expect(count).toBe(1);
  });

  it('refuses forged webhooks and answers 404 for an unknown transfer', async () => {
    const body = JSON.stringify({
      message: 'notification.transactionUpdated',
      payload: {
        transaction: { id: '00000000-0000-4000-8000-000000000000', status: 'SENT', beneficiaryVASPdid: g.gateway },
      },
      version: '1',
    });
    const forged = await fetch(`${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...webhookHeaders('whsec_' + Buffer.alloc(32).toString('base64'), 'msg_forged', body),
      },
      body,
    });
    expect(forged.status).toBe(401);
    expect(await status('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(
      (
        await api('POST', '/v1/transfers/00000000-0000-4000-8000-000000000000/decision', {
          decision: 'approve',
          reason: 'x',
        })
      ).status,
    ).toBe(404);
  });
});
