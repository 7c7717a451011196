import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bearerCall } from '../harness/http';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { createDidKeyRecord } from '../../lib/crypto';
import { loadSdnList } from '../../screening/load-sdn';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import type { PolicyRule } from '../../policy/types';
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
const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as {
  originator: Record<string, unknown>;
  beneficiary: Record<string, unknown>;
};
const evm = () => `0x${randomBytes(20).toString('hex')}`;
const rule = (
  order: number,
  actionRule: PolicyRule['actionRule'],
  ruleCheck: PolicyRule['ruleCheck'],
  ruleValue = '',
) => ({ order, actionRule, ruleCheck, ruleValue }) as PolicyRule;

/**
 * Issue 20's "done when": the incoming and outgoing workflows decide by the policy of the subsidiary (else the group's),
 * with the counterparty's review and jurisdiction, against the sandbox over HTTP on the real Temporal server.
 */
describe('decisions by policy: incoming and outgoing transfers', () => {
  const g = groupSeed();
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  const externalKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;
  let extToken: string;

  const api = (method: string, path: string, body?: unknown, token = orch.apiKeys.admin) =>
    bearerCall(orch.apiUrl, token, method, path, body);
  const sandboxCall = async (method: string, path: string, body?: unknown, token = gwToken) =>
    (await bearerCall(sb.url, token, method, path, body)).body as Json;
  const setPolicy = async (
    vaspDid: string,
    incoming: PolicyRule[],
    outgoing: PolicyRule[] = [rule(1, 'APPROVE', 'ALL')],
  ) => {
    const r = await api('PUT', `/v1/policies/${encodeURIComponent(vaspDid)}`, {
      currency: 'USD',
      incoming,
      outgoing,
      note: 'test policy',
    });
    expect(r.status).toBeLessThan(300);
  };
  const review = async (reviewValue: 'TRUSTED' | 'BLOCKED' | 'MANUAL', subsidiaryDid?: string) => {
    const r = await api('PUT', `/v1/counterparties/${encodeURIComponent(g.external)}`, {
      reviewValue,
      note: 'due diligence done',
      ...(subsidiaryDid ? { subsidiaryDid } : {}),
    });
    expect(r.status).toBeLessThan(300);
  };
  /** An incoming transfer to an address of subsidiary A, from the external VASP. */
  const receive = async (originatorName: [string, string] = ['Jane', 'Doe'], amount?: string) => {
    const destination = evm();
    const r = await api('PUT', '/v1/addresses', {
      addresses: [{ vaspDID: g.subA, asset: 'ETH', address: destination, customerRef: `c-${destination.slice(-6)}` }],
    });
    expect(r.status).toBe(200);
    return (
      await simulateTransfer(sb, {
        from: g.external,
        to: g.gateway,
        destination,
        originatorName,
        ...(amount ? { amount } : {}),
      })
    ).id;
  };
  const incoming = (id: string, check: (s: IncomingStatus) => boolean) =>
    eventually(async () => {
      const r = await api('GET', `/v1/incoming-transfers/${id}`);
      return r.status === 200 && check(r.body as IncomingStatus) ? (r.body as IncomingStatus) : undefined;
    }, 30_000);
  const auditOf = async (subject: string) =>
    ((await api('GET', `/v1/audit-log?subject=${encodeURIComponent(subject)}`)).body as Json).data as Json[];

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '30s',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      transfers: { pollIntervalMs: 300, answerDeadlineMs: 60_000 },
    });
    gwToken = await sb.token(g.gatewayUser);
    extToken = await sb.token(g.externalUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sandboxCall(
      'POST',
      '/tf/vasps/update',
      {
        did: g.external,
        fields: [
          { fieldName: 'pii_didkey', values: [{ value: externalKey.did }] },
          { fieldName: 'incorporationCountry', values: [{ value: 'DE' }] },
        ],
      },
      extToken,
    );
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
    await loadSdnList(orch.pool, {
      list: 'policy-test',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const groupPolicy = [
    rule(10, 'REJECT', 'REVIEWED_VASP_LIST', 'BLOCKED'),
    rule(20, 'APPROVE', 'REVIEWED_VASP_LIST', 'TRUSTED'),
    rule(30, 'SEND_TO_INBOX', 'ALL'),
  ];

  it('a TRUSTED counterparty is accepted with no person, and the audit row names the version, rule and facts', async () => {
    await setPolicy(g.gateway, groupPolicy);
    await review('TRUSTED');
    const id = await receive();
    const done = await incoming(id, (s) => s.phase === 'completed');
    expect(done.networkStatus).toBe('ACCEPTED');
    expect(done.decision).toBeUndefined(); // no person decided
    expect(done.policy).toMatchObject({ action: 'APPROVE', rule: { order: 20 }, policy: { vaspDid: g.gateway } });
    const row = (await auditOf(id)).find((e) => e.action === 'incoming.approve')!;
    expect(row.actor).toBe('system:policy');
    expect(row.details).toMatchObject({
      action: 'APPROVE',
      rule: { order: 20, ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'TRUSTED' },
      policy: { vaspDid: g.gateway, version: expect.any(Number), contentHash: expect.any(String) },
      facts: { counterpartyDid: g.external, counterpartyReview: 'TRUSTED', sanctionsHit: false },
    });
  });

  it('a BLOCKED counterparty is declined, with a generic reason at the network', async () => {
    await review('BLOCKED');
    const id = await receive();
    const done = await incoming(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'DECLINED', policy: { action: 'REJECT', rule: { order: 10 } } });
    const tx = await sandboxCall('GET', `/tx/info?id=${id}`);
    const declined = (tx.actions as Json[]).find((a) => a.action === 'decline');
    expect(JSON.stringify(declined ?? tx)).not.toContain('REVIEWED_VASP_LIST');
    expect((await auditOf(id)).find((e) => e.action === 'incoming.decline')!.details).toMatchObject({
      reason: expect.stringContaining('REVIEWED_VASP_LIST BLOCKED'),
    });
  });

  it("a REJECT rule on the counterparty's incorporation country declines it", async () => {
    await review('TRUSTED');
    await setPolicy(g.gateway, [rule(1, 'REJECT', 'JURISDICTION', 'IR,DE'), ...groupPolicy]);
    const id = await receive();
    const done = await incoming(id, (s) => s.phase === 'completed');
    expect(done).toMatchObject({
      networkStatus: 'DECLINED',
      policy: { action: 'REJECT', rule: { ruleCheck: 'JURISDICTION' } },
    });
    expect(done.policy!.reason).toContain('matched DE');
  });

  it("a subsidiary's own policy wins over the group's; NOT_READY reaches the network and a person decides", async () => {
    await setPolicy(g.gateway, groupPolicy);
    await setPolicy(g.subA, [rule(1, 'NOT_READY', 'ALL')]);
    const id = await receive();
    const held = await incoming(id, (s) => s.phase === 'awaiting-review');
    expect(held.policy).toMatchObject({ action: 'NOT_READY', policy: { vaspDid: g.subA } });
    await eventually(async () =>
      (await sandboxCall('GET', `/tx/info?id=${id}`)).status === 'NOT_READY' ? true : undefined,
    );
    const r = await api('POST', `/v1/transfers/${id}/decision`, { decision: 'approve', reason: 'checked by hand' });
    expect(r.status).toBe(200);
    await incoming(id, (s) => s.phase === 'completed' && s.networkStatus === 'ACCEPTED');
  });

  it('an amount rule, in the policy currency, sends a large transfer to a person and lets a small one through', async () => {
    await setPolicy(g.subA, [rule(1, 'SEND_TO_INBOX', 'TRANSACTION_AMOUNT', '>=1000'), rule(2, 'APPROVE', 'ALL')]);
    // Priced by pricing/'s embedded table (data/prices.json): 1 ETH = 3,000 USD.
    const large = await receive(['Jane', 'Doe'], '1000000000000000000');
    const held = await incoming(large, (s) => s.phase === 'awaiting-review');
    expect(held.policy).toMatchObject({ action: 'SEND_TO_INBOX', rule: { order: 1 } });
    expect(held.policy!.reason).toContain('3000.00 USD');
    const small = await receive(['Jane', 'Doe'], '100000000000000000'); // 0.1 ETH = 300 USD
    const done = await incoming(small, (s) => s.phase === 'completed');
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', policy: { action: 'APPROVE', rule: { order: 2 } } });
    const row = (await auditOf(small)).find((e) => e.action === 'incoming.approve')!;
    expect(row.details.facts).toMatchObject({
      amountFiat: 300,
      priceSource: expect.stringContaining('data/prices.json'),
    });
  });

  it('simulate prices an amount and reads the directory as a live decision does', async () => {
    const r = await api('POST', `/v1/policies/${encodeURIComponent(g.subA)}/simulate`, {
      facts: { direction: 'incoming', counterpartyDid: g.external, asset: 'ETH', amount: '2000000000000000000' },
      candidate: {
        currency: 'USD',
        incoming: [
          { order: 1, actionRule: 'REJECT', ruleCheck: 'JURISDICTION', ruleValue: 'FR' },
          { order: 2, actionRule: 'SEND_TO_INBOX', ruleCheck: 'TRANSACTION_AMOUNT', ruleValue: '>=5000' },
        ],
        outgoing: [],
      },
    });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain('6000.00 USD');
    expect(r.body).toMatchObject({ decision: { action: 'SEND_TO_INBOX', rule: { order: 2 } } });
  });

  it('a sanctions hit stays with a person whatever the policy says', async () => {
    await setPolicy(g.subA, [rule(1, 'APPROVE', 'ALL')]);
    // On the sample list (data/sanctions): screening finds it.
    const id = await receive(['Ivan', 'Petrov']);
    const held = await incoming(id, (s) => s.phase === 'awaiting-review');
    expect(held.policy).toMatchObject({ action: 'SEND_TO_INBOX', override: 'sanctions-hit', rule: { order: 1 } });
    expect((await sandboxCall('GET', `/tx/info?id=${id}`)).status).not.toBe('ACCEPTED');
  });

  describe('outgoing', () => {
    const post = async (amount = '1000000000000000000') => {
      const id = randomUUID();
      const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
        method: 'POST',
        headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
        body: JSON.stringify({
          transactionAsset: 'ETH',
          transactionAmount: amount,
          originatorVASPdid: g.subA,
          beneficiaryVASPdid: g.external,
          transactionBlockchainInfo: { destination: evm() },
          originator: fixture.originator,
          beneficiary: fixture.beneficiary,
        }),
      });
      expect(r.status).toBeLessThan(300);
      return id;
    };
    const outgoing = (id: string, check: (s: TransferState) => boolean) =>
      eventually(async () => {
        const r = await api('GET', `/v1/transfers/${id}`);
        return r.status === 200 && check(r.body as TransferState) ? (r.body as TransferState) : undefined;
      }, 30_000);

    it('REJECT refuses the transfer before anything reaches the network', async () => {
      await setPolicy(g.subA, [rule(1, 'APPROVE', 'ALL')], [rule(1, 'REJECT', 'VASP', g.external)]);
      const id = await post();
      const done = await outgoing(id, (s) => s.final);
      expect(done).toMatchObject({ status: 'REFUSED', policy: { action: 'REJECT' }, error: { type: 'PolicyRefused' } });
      expect(done.transactionId).toBeUndefined();
      expect((await auditOf(id)).map((e) => e.action)).toContain('outgoing.policy.reject');
    });

    it('SEND_TO_INBOX holds it (HELD, in the queue) until a person releases it; then it is sent', async () => {
      await setPolicy(g.subA, [rule(1, 'APPROVE', 'ALL')], [rule(1, 'SEND_TO_INBOX', 'ASSET', 'ETH')]);
      const id = await post();
      const held = await outgoing(id, (s) => s.status === 'HELD');
      expect(held.policy).toMatchObject({ action: 'SEND_TO_INBOX', rule: { ruleCheck: 'ASSET' } });
      const viewer = await api(
        'POST',
        `/v1/transfers/${id}/review`,
        { decision: 'release', reason: 'ok' },
        orch.apiKeys.viewer,
      );
      expect(viewer.status).toBe(403);
      const r = await api('POST', `/v1/transfers/${id}/review`, { decision: 'release', reason: 'known customer' });
      expect(r.status).toBe(200);
      const sent = await outgoing(id, (s) => s.transactionId !== undefined);
      expect(sent.review).toMatchObject({ decision: 'release', reason: 'known customer' });
      expect((await auditOf(id)).map((e) => e.action)).toEqual(
        expect.arrayContaining(['outgoing.policy.send_to_inbox', 'outgoing.release']),
      );
      const again = await api('POST', `/v1/transfers/${id}/review`, { decision: 'refuse', reason: 'late' });
      expect([409, 400]).toContain(again.status);
    });

    it('a person may refuse a held transfer', async () => {
      const id = await post();
      await outgoing(id, (s) => s.status === 'HELD');
      const bad = await api('POST', `/v1/transfers/${id}/review`, { decision: 'maybe', reason: 'x' });
      expect(bad.status).toBe(400);
      expect(
        await api('POST', `/v1/transfers/${id}/review`, { decision: 'refuse', reason: 'unknown wallet' }),
      ).toMatchObject({ status: 200 });
      const done = await outgoing(id, (s) => s.final);
      expect(done).toMatchObject({ status: 'REFUSED', error: { type: 'ReviewRefused' } });
    });
  });
});
