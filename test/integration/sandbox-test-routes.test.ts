import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { createDidKeyRecord } from '../../lib/crypto';
import { ConfigError } from '../../lib/errors';
import { testRouteGate } from '../../sandbox/auth/test-routes';
import { loadSandboxConfig } from '../../sandbox/config';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Issue 15, item 13: the sandbox's `/sandbox/*` routes publish keys, send transfers as a VASP and list every VASP's
 * outbox and deliveries. They exist only with SANDBOX_TEST_ROUTES=1, answer only to the operator token, and act only
 * for VASPs the seed marks simulated.
 */
describe('sandbox: the /sandbox/* test routes', () => {
  const group = groupSeed(); // `external` is marked simulated; the group's own VASPs are not
  let on: RunningSandbox;
  let off: RunningSandbox;

  beforeAll(async () => {
    [on, off] = await Promise.all([startSandbox(group.seed), startSandbox(group.seed, { testRoutes: false })]);
  });
  afterAll(async () => Promise.all([on?.close(), off?.close()]));

  const send = async (sb: RunningSandbox, method: string, path: string, body?: unknown, bearer?: string) => {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        ...(bearer && { authorization: `Bearer ${bearer}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const publishedKey = async (sb: RunningSandbox, did: string) =>
    (await send(sb, 'GET', `/tf/simple/vasps/${encodeURIComponent(did)}?fields=pii_didkey`)).body.pii_didkey as
      string | undefined;

  const routes: [string, string, unknown?][] = [
    ['PUT', `/sandbox/counterparties/${group.subA}`, { publishKey: true }],
    ['PUT', `/sandbox/counterparties/${group.subA}/behaviours`, {}],
    ['GET', `/sandbox/counterparties/${group.external}`],
    ['POST', '/sandbox/simulate/transfers', { originatorVASPdid: group.subA, beneficiaryVASPdid: group.external }],
    ['GET', '/sandbox/webhooks/deliveries'],
    ['GET', '/sandbox/outbox'],
    ['GET', '/sandbox/uploads/00000000-0000-4000-8000-000000000000'],
    ['GET', '/sandbox/faults'],
    ['GET', '/sandbox/rate-limit'],
  ];

  it('do not exist without SANDBOX_TEST_ROUTES=1, whatever the token', async () => {
    for (const [method, path, body] of routes) {
      const r = await send(off, method, path, body, off.testToken);
      expect([path, r.status, r.body.err?.name]).toEqual([path, 404, 'NotFoundError']);
    }
    expect((await send(off, 'GET', '/tf/simple/vasps')).status).toBe(200);
  });

  it('answer 401 without the operator token, or with another credential, and change nothing', async () => {
    const key = createDidKeyRecord().did;
    const gw = await on.token(group.gatewayUser);
    expect(
      (
        await send(
          on,
          'POST',
          '/tf/vasps/update',
          { did: group.subA, fields: [{ fieldName: 'pii_didkey', values: [{ value: key }] }] },
          gw,
        )
      ).status,
    ).toBe(200);
    for (const bearer of [undefined, 'not-the-token', gw, off.testToken]) {
      for (const [method, path, body] of routes) {
        const r = await send(on, method, path, body, bearer);
        expect([path, r.status]).toEqual([path, 401]);
      }
    }
    expect(await publishedKey(on, group.subA)).toBe(key);
  });

  it('are gated on the route the router matched: a percent-encoded path is the same route, 401 without the token, 404 when off (issue 25)', async () => {
    // The router decodes the path, so each of these is a test route however it is spelled.
    const encoded: [string, string, unknown?][] = [
      ['GET', '/%73andbox/outbox'],
      ['GET', '/%73andbox/faults'],
      ['GET', '/%73andbox/rate-limit'],
      ['GET', '/sandbox/webhook%73/deliveries'],
      ['GET', `/%73andbox/counterparties/${group.external}`],
      ['PUT', `/%73andbox/counterparties/${group.external}`, {}],
      ['POST', '/%73andbox/simulate/transfers', { originatorVASPdid: group.external, beneficiaryVASPdid: group.subA }],
    ];
    const gw = await on.token(group.gatewayUser);
    for (const [method, path, body] of encoded) {
      for (const bearer of [undefined, 'not-the-token', gw]) {
        const r = await send(on, method, path, body, bearer);
        expect([method, path, r.status, r.body.err?.name]).toEqual([method, path, 401, 'UnauthorizedError']);
      }
      const off404 = await send(off, method, path, body, off.testToken);
      expect([method, path, off404.status, off404.body.err?.name]).toEqual([method, path, 404, 'NotFoundError']);
    }
    expect(
      (await on.pool.query('select 1 from sim_counterparties where vasp_did = $1', [group.external])).rowCount,
    ).toBe(0);
    // With the token the encoded path reaches the route itself: it is the same route, not a miss.
    const outbox = await send(on, 'GET', '/%73andbox/outbox', undefined, on.testToken);
    expect([outbox.status, Array.isArray(outbox.body.emails)]).toEqual([200, true]);
  });

  it('are not registered at all when off: a test route added then stops the sandbox from starting (issue 25)', async () => {
    // The gate's own check, on a bare Fastify: the parts must ask testRoutesOn before registering a /sandbox route.
    const app = Fastify();
    testRouteGate(app, { testRoutes: false });
    expect(() => app.get('/sandbox/anything', async () => ({}))).toThrow(
      /test route registered while SANDBOX_TEST_ROUTES is off/,
    );
    app.get('/tf/simple/vasps', async () => ({}));
    await app.close();
    // And the sandbox that runs with them off lists none in its OpenAPI document.
    const doc = await send(off, 'GET', '/openapi.json');
    expect(Object.keys(doc.body.paths as Json).filter((p) => p.startsWith('/sandbox'))).toEqual([]);
  });

  it("with the token, act only for VASPs the seed marks simulated: a real VASP's published key stays, nothing is sent as it", async () => {
    const key = createDidKeyRecord().did;
    const gw = await on.token(group.gatewayUser);
    await send(
      on,
      'POST',
      '/tf/vasps/update',
      { did: group.subB, fields: [{ fieldName: 'pii_didkey', values: [{ value: key }] }] },
      gw,
    );
    for (const body of [{ publishKey: true }, {}]) {
      const r = await send(on, 'PUT', `/sandbox/counterparties/${group.subB}`, body, on.testToken);
      expect(r.status).toBe(403);
      expect(r.body.err.message).toMatch(/^vaspDID: .* is not a simulated VASP/);
    }
    expect(
      (await send(on, 'PUT', `/sandbox/counterparties/${group.gateway}/behaviours`, {}, on.testToken)).status,
    ).toBe(403);
    expect(await publishedKey(on, group.subB)).toBe(key);
    expect(
      (await on.pool.query('select 1 from sim_counterparties where vasp_did = any($1)', [[group.subB, group.gateway]]))
        .rowCount,
    ).toBe(0);

    const asReal = await send(
      on,
      'POST',
      '/sandbox/simulate/transfers',
      {
        originatorVASPdid: group.subB,
        beneficiaryVASPdid: group.external,
        transactionAsset: 'ETH',
        transactionAmount: '1',
        transactionBlockchainInfo: { destination: '0xabc' },
      },
      on.testToken,
    );
    expect(asReal.status).toBe(403);
    expect(asReal.body.err.message).toMatch(/^originatorVASPdid: /);
    expect(
      (await on.pool.query('select 1 from transactions where originator_vasp_did = $1', [group.subB])).rowCount,
    ).toBe(0);

    // The simulated VASP: configured, and a transfer sent as it.
    const sim = await send(on, 'PUT', `/sandbox/counterparties/${group.external}`, {}, on.testToken);
    expect(sim.status).toBe(200);
    const tx = await simulateTransfer(on, { from: group.external, to: group.subA, destination: '0xdef' });
    expect(tx.status).toBe('SENT');
    expect(
      (await send(on, 'GET', `/sandbox/webhooks/deliveries?transactionId=${tx.id}`, undefined, on.testToken)).status,
    ).toBe(200);
  });

  it('SANDBOX_TEST_ROUTES=1 needs an operator token of 24 characters or more', () => {
    expect(() => loadSandboxConfig({ SANDBOX_TEST_ROUTES: '1' })).toThrow(ConfigError);
    expect(() => loadSandboxConfig({ SANDBOX_TEST_ROUTES: '1', SANDBOX_OPERATOR_TOKEN: 'short' })).toThrow(
      /SANDBOX_OPERATOR_TOKEN/,
    );
    expect(loadSandboxConfig({ SANDBOX_TEST_ROUTES: '1', SANDBOX_OPERATOR_TOKEN: 'x'.repeat(24) })).toMatchObject({
      testRoutes: true,
    });
    expect(loadSandboxConfig({})).toMatchObject({ testRoutes: false });
  });

  it('docker-compose.yml publishes every port on loopback only, and leaves the test routes off', () => {
    const compose = readFileSync(join(__dirname, '../../docker-compose.yml'), 'utf8');
    const published = [...compose.matchAll(/^\s+- (["'])([^"']+)\1\s*$/gm)]
      .map((m) => m[2]!)
      .filter((p) => /^[\d.:]+$/.test(p));
    expect(published.length).toBeGreaterThanOrEqual(4);
    for (const p of published) expect(p).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    expect(compose).not.toMatch(/^\s+SANDBOX_TEST_ROUTES:/m);
  });
});
