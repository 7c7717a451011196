import { randomUUID } from 'node:crypto';
import { bearerCall } from '../harness/http';
import { groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const rule = (order: number, actionRule: string, ruleCheck: string, ruleValue: string) => ({
  order,
  actionRule,
  ruleCheck,
  ruleValue,
});

describe("sandbox rules engine: the network's /rules/* semantics (issue 20)", () => {
  const group = groupSeed();
  let sb: RunningSandbox;
  let gateway: string;
  let external: string;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    gateway = await sb.token(group.gatewayUser);
    external = await sb.token(group.externalUser);
  });
  afterAll(async () => sb?.close());

  const call = (token: string, method: string, path: string, body?: unknown) =>
    bearerCall(sb.url, token, method, path, body);
  const get = async (vasp: string, token = gateway) =>
    call(token, 'GET', `/rules/get?vaspDID=${encodeURIComponent(vasp)}`);
  const set = (vasp: string, ruleSet: Json, token = gateway) =>
    call(token, 'POST', '/rules/set/direction', { vaspDID: vasp, ruleSet });

  it('set/direction replaces the directions given and keeps the others; get lists them in order', async () => {
    const first = await set(group.subA, {
      incoming: [rule(2, 'APPROVE', 'ALL', ''), rule(1, 'REJECT', 'REVIEWED_VASP_LIST', 'BLOCKED')],
      outgoing: [rule(1, 'SEND_TO_INBOX', 'TRANSACTION_AMOUNT', '>=1000')],
    });
    expect(first.status).toBe(201);
    expect(first.body.map((r: Json) => [r.direction, r.order, r.actionRule])).toEqual([
      ['incoming', 1, 'REJECT'],
      ['incoming', 2, 'APPROVE'],
      ['outgoing', 1, 'SEND_TO_INBOX'],
    ]);
    expect(first.body[0]).toMatchObject({ vaspDID: group.subA, source: '', createdBy: group.gatewayUser.did });
    const replaced = await set(group.subA, { incoming: [rule(5, 'REJECT', 'JURISDICTION', 'KP, IR')] });
    expect(replaced.status).toBe(201);
    expect(replaced.body.map((r: Json) => [r.direction, r.ruleCheck])).toEqual([
      ['incoming', 'JURISDICTION'],
      ['outgoing', 'TRANSACTION_AMOUNT'],
    ]);
    expect(replaced.body[0].jurisdictions).toEqual(['KP', 'IR']);
    // The outgoing rule kept its id; an empty list empties a direction.
    expect(replaced.body[1].id).toBe(first.body[2].id);
    expect((await get(group.subA)).body).toEqual(replaced.body);
    const emptied = await set(group.subA, { outgoing: [] });
    expect(emptied.body.map((r: Json) => r.direction)).toEqual(['incoming']);
    // Each VASP has its own rules.
    expect((await get(group.subB)).body).toEqual([]);
  });

  it('refuses bad rules with the engine error shape, changing nothing', async () => {
    const before = (await get(group.subA)).body;
    const cases: [Json, RegExp][] = [
      [{ incoming: [rule(1, 'APPROVE', 'PLANET', 'MARS')] }, /ruleCheck/],
      [{ incoming: [rule(1, 'MAYBE', 'ALL', '')] }, /actionRule/],
      [{ incoming: [{ ...rule(1, 'APPROVE', 'ALL', ''), ruleValue: 7 }] }, /ruleValue/],
      [{ incoming: [rule(1, 'APPROVE', 'ALL', ''), rule(1, 'REJECT', 'ALL', '')] }, /duplicated orders/],
      [{ incoming: [rule(1, 'REJECT', 'VASP', 'not-a-did')] }, /DIDs/],
      [{ incoming: [rule(1, 'REJECT', 'VASP', `did:ethr:0x${'0'.repeat(40)}`)] }, /not found/],
      [{ incoming: [rule(1, 'REJECT', 'JURISDICTION', 'Narnia')] }, /country codes/],
      [{ incoming: [rule(1, 'APPROVE', 'ALL', '')], outgoing: [rule(1, 'REJECT', 'RISK_SCORE', 'high')] }, /number/],
      [{}, /incoming, outgoing or both/],
    ];
    for (const [ruleSet, message] of cases) {
      const r = await set(group.subA, ruleSet);
      expect([JSON.stringify(ruleSet), r.status]).toEqual([JSON.stringify(ruleSet), 400]);
      expect(r.body.err).toMatchObject({ name: 'NotabeneRulesEngineError', code: '400' });
      expect(r.body.err.message).toMatch(message);
    }
    expect((await get(group.subA)).body).toEqual(before);
  });

  it('delete removes the ids given, or none when one is not the VASP’s (400 naming it)', async () => {
    const [r0, r1, r2] = (
      await set(group.subB, {
        incoming: [rule(1, 'APPROVE', 'ALL', ''), rule(2, 'REJECT', 'ALL', '')],
        outgoing: [rule(1, 'APPROVE', 'ALL', '')],
      })
    ).body as [Json, Json, Json];
    const unknown = randomUUID();
    const refused = await call(gateway, 'POST', '/rules/delete', {
      vaspDID: group.subB,
      ids: [r0.id, unknown],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message: `There are ids that were not found: ["${unknown}"]` });
    // Another VASP's rule is not found either.
    const subARule = (await get(group.subA)).body[0].id as string;
    expect((await call(gateway, 'POST', '/rules/delete', { vaspDID: group.subB, ids: [subARule] })).status).toBe(400);
    expect((await get(group.subB)).body).toHaveLength(3);
    const left = await call(gateway, 'POST', '/rules/delete', { vaspDID: group.subB, ids: [r0.id] });
    expect(left.status).toBe(200);
    expect(left.body.map((r: Json) => r.id)).toEqual([r1.id, r2.id]);
  });

  it('authenticated as the VASP: another VASP’s users can neither read nor change its rules', async () => {
    expect((await get(group.subA, external)).status).toBe(403);
    expect((await set(group.subA, { incoming: [] }, external)).status).toBe(403);
    expect((await call(external, 'POST', '/rules/delete', { vaspDID: group.subA, ids: [randomUUID()] })).status).toBe(
      403,
    );
    const r = await fetch(`${sb.url}/rules/get?vaspDID=${encodeURIComponent(group.subA)}`);
    expect(r.status).toBe(401);
    expect((await get(group.subA)).body.length).toBeGreaterThan(0);
  });
});
