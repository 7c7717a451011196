import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { recordDecision } from '../../policy/store';
import type { PolicyDecision, PolicyFacts } from '../../policy/types';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { createDidKeyRecord } from '../../lib/crypto';
import type { Role } from '../../lib/principal';
import { roleCall } from '../harness/http';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as {
  originator: unknown;
  beneficiary: unknown;
};

const rule = (order: number, actionRule: string, ruleCheck: string, ruleValue: string) => ({
  order,
  actionRule,
  ruleCheck,
  ruleValue,
});

describe('policies API: versions, validation, roles, simulate, backtest, shadow (issue 20)', () => {
  const g = groupSeed();
  const simulated = randomDid();
  g.seed.vasps.push({ did: simulated, name: 'Simulated VASP', simulated: true });
  const originatorKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const policyPath = (did: string, rest = '') => `/v1/policies/${encodeURIComponent(did)}${rest}`;
  const history = async (did: string) =>
    ((await api('viewer', 'GET', policyPath(did))).body.history as Json[]).map((v) => v.id);

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]),
      transfers: { pollIntervalMs: 300, answerDeadlineMs: 60_000 },
    });
    await sb.simulateCounterparty(encodeURIComponent(simulated), { default: 'accept' });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const groupPolicy = {
    currency: 'EUR',
    incoming: [
      rule(10, 'REJECT', 'REVIEWED_VASP_LIST', 'BLOCKED'),
      rule(20, 'SEND_TO_INBOX', 'TRANSACTION_AMOUNT', '>=1000'),
      rule(30, 'APPROVE', 'ALL', ''),
    ],
    outgoing: [rule(1, 'APPROVE', 'ALL', '')],
    note: 'the group policy',
  };

  it('saves immutable versions with their history; the same document is the same version; audited', async () => {
    const first = await api('compliance', 'PUT', policyPath(g.gateway), groupPolicy);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: true, activated: true, shadow: false });
    expect(first.body.version).toMatchObject({ vaspDid: g.gateway, version: 1, note: 'the group policy' });
    expect(first.body.version.contentHash).toMatch(/^[0-9a-f]{64}$/);
    // The same rules, listed in another order: the same version.
    const again = await api('compliance', 'PUT', policyPath(g.gateway), {
      ...groupPolicy,
      incoming: [...groupPolicy.incoming].reverse(),
      note: 'again',
    });
    expect(again.body).toMatchObject({ created: false, version: { id: first.body.version.id, version: 1 } });
    const second = await api('admin', 'PUT', policyPath(g.gateway), {
      ...groupPolicy,
      outgoing: [rule(1, 'SEND_TO_INBOX', 'ASSET', 'BTC'), rule(2, 'APPROVE', 'ALL', '')],
      note: 'hold BTC',
    });
    expect(second.body.version.version).toBe(2);
    const state = await api('viewer', 'GET', policyPath(g.gateway));
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ source: 'own', active: { id: second.body.version.id }, shadow: null });
    expect(state.body.history.map((v: Json) => v.version)).toEqual([2, 1]);
    expect(state.body.history[1]).toEqual({
      id: first.body.version.id,
      vaspDid: g.gateway,
      version: 1,
      contentHash: first.body.version.contentHash,
      author: expect.stringMatching(/^apikey:/),
      createdAt: expect.any(String),
      note: 'the group policy',
    });
    // A subsidiary without its own uses the group's.
    const sub = await api('viewer', 'GET', policyPath(g.subB));
    expect(sub.body).toMatchObject({ source: 'group', active: { id: second.body.version.id }, history: [] });
    const { rows } = await orch.pool.query(
      `select action, details from audit_log where subject = $1 and action like 'policy.%' order by seq`,
      [g.gateway],
    );
    expect(rows.map((r) => r.action)).toEqual(['policy.activate', 'policy.activate', 'policy.activate']);
    expect(rows[2].details).toMatchObject({
      versionId: second.body.version.id,
      contentHash: second.body.version.contentHash,
      created: true,
    });
  });

  it('only compliance (and admin) change a policy or backtest; every role reads and simulates', async () => {
    for (const role of ['viewer', 'operator'] as const) {
      expect((await api(role, 'PUT', policyPath(g.subA), groupPolicy)).status).toBe(403);
      const candidate = { currency: 'EUR', incoming: groupPolicy.incoming, outgoing: [] };
      const backtest = { candidate, from: '2026-01-01', to: '2026-02-01' };
      expect((await api(role, 'POST', policyPath(g.subA, '/backtest'), backtest)).status).toBe(403);
      expect((await api(role, 'GET', policyPath(g.subA))).status).toBe(200);
      const simulate = { facts: { direction: 'incoming', asset: 'ETH', amount: '1' } };
      expect((await api(role, 'POST', policyPath(g.subA, '/simulate'), simulate)).status).toBe(200);
    }
    expect(await history(g.subA)).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field, and saves nothing', async () => {
    const before = await history(g.gateway);
    const put = (body: unknown, did = g.gateway) => api('compliance', 'PUT', policyPath(did), body);
    const cases: [unknown, string][] = [
      [{ ...groupPolicy, incoming: [rule(1, 'APPROVE', 'PLANET', 'MARS')] }, 'incoming[0].ruleCheck'],
      [{ ...groupPolicy, incoming: [rule(1, 'MAYBE', 'ALL', '')] }, 'incoming[0].actionRule'],
      [
        { ...groupPolicy, incoming: [{ ...rule(1, 'APPROVE', 'RISK_SCORE', ''), ruleValue: 70 }] },
        'incoming[0].ruleValue',
      ],
      [
        { ...groupPolicy, outgoing: [rule(1, 'APPROVE', 'ALL', ''), rule(2, 'REJECT', 'RISK_SCORE', 'high')] },
        'outgoing[1].ruleValue',
      ],
      [{ ...groupPolicy, incoming: [rule(1, 'REJECT', 'JURISDICTION', 'XX')] }, 'incoming[0].ruleValue'],
      [
        { ...groupPolicy, incoming: [rule(1, 'REJECT', 'ALL', ''), rule(1, 'APPROVE', 'ALL', '')] },
        'incoming[1].order',
      ],
      [{ ...groupPolicy, currency: 'euro' }, 'currency'],
      [{ ...groupPolicy, shadow: true, activate: true }, 'shadow'],
      [{ ...groupPolicy, author: 'someone else' }, 'author'],
    ];
    for (const [body, field] of cases) {
      const r = await put(body);
      expect([field, r.status]).toEqual([field, 400]);
      expect(r.body.error.field).toBe(field);
    }
    // 10,000 small rules: refused on the count, naming the list and the limit.
    const many = Array.from({ length: 10_000 }, (_, i) => rule(i, 'APPROVE', 'ASSET', 'ETH'));
    const tooMany = await put({ ...groupPolicy, incoming: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.field).toBe('incoming');
    expect(tooMany.body.error.message).toMatch(/1000/);
    // A DID that is not one, and one outside the group.
    const notDid = await put(groupPolicy, 'not-a-did');
    expect(notDid.status).toBe(400);
    expect(notDid.body.error.field).toMatch(/vaspDID/);
    const outsider = await put(groupPolicy, randomDid());
    expect(outsider.status).toBe(404);
    expect(outsider.body.error.field).toBe('vaspDID');
    expect(await history(g.gateway)).toEqual(before);
  });

  it('simulates: the matched rule and why, with a candidate, and the guards', async () => {
    const simulate = async (facts: Json, candidate?: Json) => {
      const r = await api('viewer', 'POST', policyPath(g.subA, '/simulate'), {
        facts,
        ...(candidate ? { candidate } : {}),
      });
      expect(r.status).toBe(200);
      return r.body as { decision: Json; facts: Json };
    };
    const big = await simulate({ direction: 'incoming', asset: 'ETH', amount: '5', amountFiat: 2500 });
    expect(big.decision).toMatchObject({
      action: 'SEND_TO_INBOX',
      rule: { order: 20, ruleCheck: 'TRANSACTION_AMOUNT', ruleValue: '>=1000' },
      policy: { vaspDid: g.gateway, version: 2 },
    });
    expect(big.decision.reason).toMatch(/rule 20/);
    const blocked = await simulate({ direction: 'incoming', asset: 'ETH', amount: '5', counterpartyReview: 'BLOCKED' });
    expect(blocked.decision).toMatchObject({ action: 'REJECT', rule: { order: 10 } });
    // No price known (an asset the price table does not list) and an amount rule: a person decides, and the answer
    // says which fact was missing.
    const unknownPrice = await simulate({ direction: 'incoming', asset: 'NOPRICE', amount: '5' });
    expect(unknownPrice.decision).toMatchObject({ action: 'SEND_TO_INBOX', rule: { order: 20 } });
    expect(unknownPrice.decision.unknownFact).toBeDefined();
    const small = await simulate({
      direction: 'incoming',
      asset: 'ETH',
      amount: '5',
      amountFiat: 10,
      sanctionsHit: true,
    });
    expect(small.decision).toMatchObject({ action: 'SEND_TO_INBOX', override: 'sanctions-hit', rule: { order: 30 } });
    const candidate = { currency: 'EUR', incoming: [rule(5, 'NOT_READY', 'ASSET', 'ETH')], outgoing: [] };
    const withCandidate = await simulate({ direction: 'incoming', asset: 'ETH', amount: '5' }, candidate);
    expect(withCandidate.decision).toMatchObject({ action: 'NOT_READY', rule: { order: 5 }, policy: { version: 0 } });
    const bad = await api('viewer', 'POST', policyPath(g.subA, '/simulate'), {
      facts: { direction: 'incoming', asset: 'ETH', amount: '5' },
      candidate: { ...candidate, incoming: [rule(5, 'NOT_READY', 'ASSET', 'E T H')] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('candidate.incoming[0].ruleValue');
  });

  it('backtests a candidate over transfers sent through the platform: how many decisions change, which way', async () => {
    const from = new Date(Date.now() - 60_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const id = randomUUID();
      const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
        method: 'POST',
        headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
        body: JSON.stringify({
          transactionAsset: 'ETH',
          transactionAmount: '1000000000000000000',
          originatorVASPdid: g.subA,
          beneficiaryVASPdid: simulated,
          transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
          originator: fixture.originator,
          beneficiary: fixture.beneficiary,
        }),
      });
      expect(r.status).toBeLessThan(300);
      ids.push(id);
    }
    await eventually(async () => {
      const { rows } = await orch.pool.query(`select id from transfer_view where id = any($1) and final`, [ids]);
      return rows.length === ids.length ? true : undefined;
    }, 60_000);
    const to = new Date(Date.now() + 60_000).toISOString();
    const backtest = (body: Json) => api('compliance', 'POST', policyPath(g.subA, '/backtest'), { from, to, ...body });
    const candidate = {
      currency: 'EUR',
      incoming: [rule(1, 'APPROVE', 'ALL', '')],
      outgoing: [rule(1, 'REJECT', 'ASSET', 'ETH'), rule(2, 'APPROVE', 'ALL', '')],
    };
    const result = await backtest({ candidate });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      transfers: 2,
      changed: 2,
      byChange: { 'APPROVE→REJECT': 2 },
      active: { vaspDid: g.gateway, version: 2 },
      candidate: { vaspDid: g.subA, version: 0 },
    });
    expect(result.body.examples.map((e: Json) => e.transferId).sort()).toEqual([...ids].sort());
    expect(result.body.examples[0]).toMatchObject({
      direction: 'outgoing',
      from: 'APPROVE',
      to: 'REJECT',
      ruleBefore: 2,
      ruleAfter: 1,
    });
    // The same rules as the active version change nothing; incoming only finds none of these.
    const same = await backtest({
      candidate: {
        currency: 'EUR',
        incoming: groupPolicy.incoming,
        outgoing: [rule(1, 'SEND_TO_INBOX', 'ASSET', 'BTC'), rule(2, 'APPROVE', 'ALL', '')],
      },
    });
    expect(same.body).toMatchObject({ transfers: 2, changed: 0, byChange: {} });
    expect((await backtest({ candidate, direction: 'incoming' })).body).toMatchObject({ transfers: 0, changed: 0 });
    // A saved version by id; an unknown one; a range too long; neither candidate nor version.
    const v1 = (await api('viewer', 'GET', policyPath(g.gateway))).body.history[1].id as string;
    const byId = await api('compliance', 'POST', policyPath(g.gateway, '/backtest'), { from, to, versionId: v1 });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ transfers: 2, changed: 0, candidate: { versionId: v1, version: 1 } });
    expect((await backtest({ versionId: randomUUID() })).status).toBe(404);
    const long = await backtest({ candidate, from: '2024-01-01', to: '2025-06-01' });
    expect(long.status).toBe(400);
    expect(long.body.error.field).toBe('to');
    expect((await backtest({})).body.error.field).toBe('candidate');
  });

  it("pushes the active version's network rules to the sandbox's rules engine, refusing or skipping ours only", async () => {
    const push = (role: Role, body?: Json) => api(role, 'POST', policyPath(g.subB, '/push'), body ?? {});
    expect((await push('operator')).status).toBe(403);
    // The group's version 2 holds an ASSET rule (outgoing, order 1), which the network does not know.
    const refused = await push('compliance');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ field: 'skipUnsupported' });
    expect(refused.body.error.rule).toContain('outgoing rule 1 (ASSET)');
    const token = await sb.token(g.gatewayUser);
    const atNetwork = async () =>
      (await (
        await fetch(`${sb.url}/rules/get?vaspDID=${encodeURIComponent(g.subB)}`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as Json[];
    expect(await atNetwork()).toEqual([]);
    const pushed = await push('compliance', { skipUnsupported: true });
    expect(pushed.status).toBe(200);
    expect(pushed.body).toMatchObject({
      policy: { vaspDid: g.gateway, version: 2 },
      pushed: { incoming: 3, outgoing: 1 },
      skipped: [{ direction: 'outgoing', order: 1, ruleCheck: 'ASSET' }],
    });
    const read = await atNetwork();
    expect(read.map((r) => [r.direction, r.order, r.actionRule, r.ruleCheck, r.ruleValue])).toEqual([
      ['incoming', 10, 'REJECT', 'REVIEWED_VASP_LIST', 'BLOCKED'],
      ['incoming', 20, 'SEND_TO_INBOX', 'TRANSACTION_AMOUNT', '>=1000'],
      ['incoming', 30, 'APPROVE', 'ALL', ''],
      ['outgoing', 2, 'APPROVE', 'ALL', ''],
    ]);
    const { rows } = await orch.pool.query(
      `select details from audit_log where subject = $1 and action = 'policy.push'`,
      [g.subB],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].details).toMatchObject({
      versionId: pushed.body.policy.versionId,
      skipped: [{ ruleCheck: 'ASSET' }],
    });
  });

  it('shadow mode: a version run beside the active one, its recorded decisions compared', async () => {
    const active = (await api('viewer', 'GET', policyPath(g.gateway))).body.active as Json;
    const candidate = {
      currency: 'EUR',
      incoming: [rule(1, 'SEND_TO_INBOX', 'ALL', '')],
      outgoing: [rule(1, 'APPROVE', 'ALL', '')],
      note: 'try holding everything',
      shadow: true,
    };
    const put = await api('compliance', 'PUT', policyPath(g.gateway), candidate);
    expect(put.body).toMatchObject({ created: true, activated: false, shadow: true });
    const state = await api('viewer', 'GET', policyPath(g.gateway));
    expect(state.body).toMatchObject({ active: { id: active.id }, shadow: { id: put.body.version.id } });
    // Decisions as the workflows record them: two transfers, the shadow disagreeing on one.
    const ref = (v: Json) => ({ vaspDid: g.gateway, versionId: v.id, version: v.version, contentHash: v.contentHash });
    const facts: PolicyFacts = {
      direction: 'incoming',
      vaspDid: g.subA,
      counterpartyReview: 'UNREVIEWED',
      asset: 'ETH',
      amount: '1',
      createdAt: new Date().toISOString(),
    };
    const decision = (action: PolicyDecision['action'], v: Json, order: number): PolicyDecision => ({
      action,
      policy: ref(v) as PolicyDecision['policy'],
      rule: rule(order, action, 'ALL', '') as PolicyDecision['rule'],
      reason: 'test',
    });
    for (const [transferId, activeAction] of [
      [`shadow-a-${randomUUID()}`, 'APPROVE'],
      [`shadow-b-${randomUUID()}`, 'SEND_TO_INBOX'],
    ] as const) {
      const base = { transferId, direction: 'incoming' as const, vaspDid: g.subA, facts };
      await recordDecision(orch.pool, { ...base, decision: decision(activeAction, active, 30), shadow: false });
      await recordDecision(orch.pool, {
        ...base,
        decision: decision('SEND_TO_INBOX', put.body.version, 1),
        shadow: true,
      });
    }
    const comparison = await api('viewer', 'GET', policyPath(g.gateway, '/shadow'));
    expect(comparison.status).toBe(200);
    expect(comparison.body).toMatchObject({
      shadow: { id: put.body.version.id },
      decisions: 2,
      agree: 1,
      disagree: 1,
      byChange: { 'APPROVE→SEND_TO_INBOX': 1 },
    });
    expect(comparison.body.examples).toEqual([
      expect.objectContaining({ active: 'APPROVE', shadow: 'SEND_TO_INBOX', ruleActive: 30, ruleShadow: 1 }),
    ]);
    expect((await api('operator', 'DELETE', policyPath(g.gateway, '/shadow'))).status).toBe(403);
    expect((await api('compliance', 'DELETE', policyPath(g.gateway, '/shadow'))).status).toBe(204);
    expect((await api('viewer', 'GET', policyPath(g.gateway))).body.shadow).toBeNull();
  });
});
