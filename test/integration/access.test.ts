import { createHmac } from 'node:crypto';
import { runCli } from '../harness/cli';
import { registerApiKeyCommands } from '../../client/cli/api-keys';
import { OperatorIssuer } from '../../sandbox/auth/operator-issuer';
import { operatorIssuerUrl } from '../../sandbox/server';
import { ROLES, type Role } from '../../lib/principal';
import {
  eventually,
  groupSeed,
  operatorSeed,
  randomDid,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const read: Role[] = ['viewer', 'operator', 'compliance', 'admin'];
const operate: Role[] = ['operator', 'admin'];
const compliance: Role[] = ['compliance', 'admin'];
const admin: Role[] = ['admin'];
const PUBLIC = 'public';

/**
 * Who may call what: the policy of issue #10, written out here on its own so the server's declarations are checked
 * against it, not against themselves. HEAD follows GET. A route the server has and this table lacks fails the test.
 */
const POLICY: Record<string, Role[] | typeof PUBLIC> = {
  'GET /healthz': PUBLIC,
  'GET /openapi.json': PUBLIC,
  'POST /webhooks/notification': PUBLIC,
  'POST /webhooks/notification/:endpoint': PUBLIC,
  'GET /webhooks/address/:vaspDid': PUBLIC,
  'OPTIONS /codec*': PUBLIC,
  'GET /console': PUBLIC,
  'GET /console/': PUBLIC,
  'GET /console/app.js': PUBLIC,
  'GET /console/app.css': PUBLIC,
  'GET /console/vendor/preact.mjs': PUBLIC,
  'GET /console/vendor/hooks.mjs': PUBLIC,
  'GET /console/vendor/htm.mjs': PUBLIC,
  'GET /console/vendor/uplot.css': PUBLIC,
  'GET /console/config.json': read,
  'GET /console/vasp-names.json': read,
  'GET /console/sign-in.json': PUBLIC,
  'GET /v1/me': read,
  'POST /v1/checks/connectivity': operate,
  'GET /v1/checks/connectivity/:workflowId': read,
  'POST /v1/transfers': operate,
  'POST /v1/transfers/validate': operate,
  'GET /v1/transfers/:id': read,
  // The custody system adds the broadcast transaction's hash (issue 23, item 5).
  'PATCH /v1/transfers/:id': operate,
  'GET /v1/transfers': read,
  'GET /v1/transfers/list/:workflowId': read,
  'POST /v1/transfers/list/rebuild': operate,
  'GET /v1/incoming-transfers/:id': read,
  'POST /v1/transfers/:id/route': compliance,
  'POST /v1/transfers/:id/decision': compliance,
  // Releasing or refusing an outgoing transfer the policy held (issue 20).
  'POST /v1/transfers/:id/review': compliance,
  'GET /v1/kpis': read,
  'GET /v1/counterparties': read,
  'GET /v1/counterparties/:vaspDID': read,
  'PUT /v1/counterparties/:vaspDID': compliance,
  'DELETE /v1/counterparties/:vaspDID': compliance,
  'POST /v1/counterparties/sync': compliance,
  // Ownership proofs of self-hosted wallets (issue 22): operators start them and report what custody saw.
  'POST /v1/wallet-proofs': operate,
  'GET /v1/wallet-proofs': read,
  'GET /v1/wallet-proofs/:id': read,
  'POST /v1/wallet-proofs/:id/signature': operate,
  'POST /v1/wallet-proofs/:id/deposit-observed': operate,
  'POST /v1/wallet-proofs/:id/review': compliance,
  'POST /v1/deposits': operate,
  'GET /v1/deposits': read,
  'GET /v1/deposits/:id': read,
  // A compliance officer releases or returns a held deposit; the custody system confirms a return (issue 23).
  'POST /v1/deposits/:id/decision': compliance,
  'POST /v1/deposits/:id/returned': operate,
  'GET /v1/policies/:vaspDID': read,
  'PUT /v1/policies/:vaspDID': compliance,
  // Evaluates given facts only: nothing is stored or read but the policy.
  'POST /v1/policies/:vaspDID/simulate': read,
  // Reads the stored transfers' decisions and screening results.
  'POST /v1/policies/:vaspDID/backtest': compliance,
  'POST /v1/policies/:vaspDID/push': compliance,
  'GET /v1/policies/:vaspDID/shadow': read,
  'DELETE /v1/policies/:vaspDID/shadow': compliance,
  'GET /v1/vasps/:vaspDID/keys': read,
  'POST /v1/vasps/:vaspDID/keys/rotate': operate,
  'GET /v1/vasps/:vaspDID/keys/rotation': read,
  'POST /v1/vasps/:vaspDID/keys/import': admin,
  'POST /v1/vasps/:vaspDID/keys/:keyId/destroy': admin,
  'GET /v1/key-rotations': read,
  'PUT /v1/addresses': operate,
  'DELETE /v1/addresses': operate,
  'GET /v1/addresses': read,
  'POST /v1/address-book/:vaspDID/reconcile': operate,
  'GET /v1/address-book/:vaspDID/reconcile/:workflowId': read,
  'GET /v1/address-book/:vaspDID/reports': read,
  'GET /v1/address-book/runs': read,
  'GET /v1/audit-log': compliance,
  'GET /v1/audit-log/export': compliance,
  'GET /v1/api-keys': admin,
  'POST /v1/api-keys': admin,
  'POST /v1/api-keys/:key/revoke': admin,
  'POST /codec/decode': compliance,
  'POST /codec/encode': compliance,
  'GET /didkey/new': operate,
  'POST /tx/create': operate,
  'POST /tx/update': operate,
  // It answers decrypted personal data.
  'GET /tx/info': compliance,
};

/** Parameters that exist nowhere, so a request that passes authentication changes nothing. */
const PARAMS: Record<string, string> = {
  id: '00000000-0000-4000-8000-000000000000',
  workflowId: 'connectivity-check-none',
  vaspDID: randomDid(),
  vaspDid: randomDid(),
  keyId: '00000000-0000-4000-8000-000000000000',
  key: 'tro_0000000000000000',
  endpoint: 'none',
};
const pathOf = (url: string) =>
  url.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(PARAMS[name]!)).replace(/\*$/, '/decode');
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('access: every route of the API × every role and bad credential, against the running stack', () => {
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let routes: { method: string; url: string; roles?: readonly Role[]; public?: string }[];
  const tokens = {} as Record<Role, string>;
  const bad: Record<string, string> = {};

  const call = async (method: string, url: string, authorization?: string) => {
    const body = ['POST', 'PUT', 'DELETE'].includes(method) ? '{}' : undefined;
    const r = await fetch(`${orch.apiUrl}${pathOf(url)}`, {
      method,
      headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body,
    });
    const text = await r.text();
    let json: Json | undefined;
    try {
      json = text ? (JSON.parse(text) as Json) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, json, wwwAuthenticate: r.headers.get('www-authenticate') };
  };
  /** The error type in the API's shape, or in the network's for the agent endpoints. */
  const errorType = (json: Json | undefined) => json?.error?.type ?? json?.err?.name;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      auth: sandboxOidc(sb),
    });
    routes = orch.api.routeAccess.filter((r) => !r.url.startsWith('/docs'));
    for (const role of ROLES) tokens[role] = await sb.operatorToken(operators[role]);

    // Tokens signed with the provider's own key, each wrong in one way; and two that were never signed with it.
    const issuer = await OperatorIssuer.open(sb.pool, operatorIssuerUrl(sb.url));
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer.issuer,
      sub: operators.admin.subject,
      aud: 'travel-rule-orchestrator',
      iat: now,
      nbf: now,
      exp: now + 600,
      jti: 'crafted',
      name: 'Crafted Admin',
      roles: ['admin'],
    };
    bad.expired = await issuer.sign({ ...claims, iat: now - 3600, nbf: now - 3600, exp: now - 120 });
    bad.notYetValid = await issuer.sign({ ...claims, nbf: now + 600 });
    bad.wrongAudience = await issuer.sign({ ...claims, aud: 'another-api' });
    bad.wrongIssuer = await issuer.sign({ ...claims, iss: 'https://idp.attacker.example' });
    const [header, , signature] = tokens.viewer.split('.');
    const viewerClaims = JSON.parse(Buffer.from(tokens.viewer.split('.')[1]!, 'base64url').toString()) as Json;
    bad.tampered = `${header}.${b64({ ...viewerClaims, roles: ['admin'] })}.${signature}`;
    bad.algNone = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    const hsHeader = b64({ alg: 'HS256', typ: 'JWT', kid: issuer.publicJwk.kid });
    const hsSignature = createHmac('sha256', JSON.stringify(issuer.publicJwk))
      .update(`${hsHeader}.${b64(claims)}`)
      .digest('base64url');
    bad.hmacWithPublicKey = `${hsHeader}.${b64(claims)}.${hsSignature}`;
    bad.garbage = 'not-a-token';
    bad.unknownApiKey = 'tro_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    // An admin API key that is revoked from the CLI.
    const created = await runCli(
      (p) => registerApiKeyCommands(p, { pool: orch.pool }),
      ['api-keys', 'create', '--role', 'admin', '--name', 'to-be-revoked'],
    );
    const key = created.split('\n')[0]!;
    expect((await call('GET', '/v1/me', `Bearer ${key}`)).status).toBe(200);
    await runCli((p) => registerApiKeyCommands(p, { pool: orch.pool }), ['api-keys', 'revoke', key.slice(0, 20)]);
    bad.revokedApiKey = key;
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('every route the server registers declares its access, and it is the policy', () => {
    const declared = routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`);
    expect(declared.filter((k) => !(k in POLICY))).toEqual([]);
    expect(Object.keys(POLICY).filter((k) => !declared.includes(k))).toEqual([]);
    for (const r of routes) {
      const expected = POLICY[`${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`];
      if (expected === PUBLIC)
        expect({ route: `${r.method} ${r.url}`, public: typeof r.public }).toEqual({
          route: `${r.method} ${r.url}`,
          public: 'string',
        });
      else
        expect({ route: `${r.method} ${r.url}`, roles: [...(r.roles ?? [])].sort() }).toEqual({
          route: `${r.method} ${r.url}`,
          roles: [...expected!].sort(),
        });
    }
  });

  it("without credentials every route but the health probe, the signed webhooks and static files answers 401 in the API's error shape", async () => {
    const failures: string[] = [];
    for (const r of routes.filter((x) => x.roles)) {
      const res = await call(r.method, r.url);
      if (
        res.status !== 401 ||
        (r.method !== 'HEAD' && errorType(res.json) !== 'AuthenticationError') ||
        !res.wwwAuthenticate?.startsWith('Bearer')
      ) {
        failures.push(`${r.method} ${r.url}: ${res.status} ${JSON.stringify(res.json)}`);
      }
    }
    expect(failures).toEqual([]);
    // The public ones answer without a credential (the webhooks refuse what is not signed by the network).
    for (const path of ['/healthz', '/openapi.json', '/console', '/console/app.js', '/docs/json'])
      expect((await call('GET', path)).status).toBe(200);
    orch.webhooks.notification.none = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect((await call('POST', '/webhooks/notification/none')).status).toBe(401);
  });

  it('each role reaches exactly the routes its policy allows (403 naming the roles otherwise)', async () => {
    const failures: string[] = [];
    for (const r of routes.filter((x) => x.roles)) {
      for (const role of ROLES) {
        const res = await call(r.method, r.url, `Bearer ${tokens[role]}`);
        const allowed = r.roles!.includes(role);
        if (allowed && (res.status === 401 || res.status === 403))
          failures.push(`${role} ${r.method} ${r.url}: refused ${res.status} ${JSON.stringify(res.json)}`);
        if (!allowed && (res.status !== 403 || (r.method !== 'HEAD' && errorType(res.json) !== 'ForbiddenError'))) {
          failures.push(`${role} ${r.method} ${r.url}: ${res.status} instead of 403`);
        }
        if (!allowed && r.method !== 'HEAD' && !r.url.startsWith('/tx') && !r.url.startsWith('/didkey')) {
          const e = res.json?.error as Json | undefined;
          if (!e?.message?.includes(r.roles!.join(' or ')) || !Array.isArray(e.required))
            failures.push(`${role} ${r.method} ${r.url}: 403 without the roles: ${JSON.stringify(e)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it.each([
    ['expired', /expired/],
    ['notYetValid', /not valid yet/],
    ['wrongAudience', /another audience/],
    ['wrongIssuer', /another issuer/],
    ['tampered', /signature/],
    ['algNone', /algorithm|not a valid/],
    ['hmacWithPublicKey', /algorithm/],
    ['garbage', /not a valid signed JWT/],
    ['unknownApiKey', /not valid/],
    ['revokedApiKey', /revoked/],
  ])('credential %s: 401 on every protected route', async (name, reason) => {
    const failures: string[] = [];
    for (const r of routes.filter((x) => x.roles)) {
      const res = await call(r.method, r.url, `Bearer ${bad[name]}`);
      if (res.status !== 401) failures.push(`${r.method} ${r.url}: ${res.status}`);
      if (r.method === 'GET' && r.url === '/v1/me' && !reason.test(String(res.json?.error?.message)))
        failures.push(`message: ${res.json?.error?.message}`);
    }
    expect(failures).toEqual([]);
  });

  it("the agent listener serves the agent's endpoints without credentials, and nothing else", async () => {
    const didkey = await fetch(`${orch.agentUrl}/didkey/new`);
    expect(didkey.status).toBe(200);
    expect(((await didkey.json()) as Json).did).toMatch(/^did:key:/);
    expect((await fetch(`${orch.agentUrl}/tx/info?id=none`)).status).not.toBe(401);
    for (const path of ['/v1/transfers', '/v1/me', '/console/config.json', '/v1/api-keys'])
      expect((await fetch(`${orch.agentUrl}${path}`)).status).toBe(404);
    expect(
      (
        await fetch(`${orch.agentUrl}/codec/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"payloads":[]}',
        })
      ).status,
    ).toBe(404);
  });

  it('names the caller from the token: subject, issuer, name, roles, credential, and the stable actor; a token a little past exp is within the clock skew', async () => {
    const me = await call('GET', '/v1/me', `Bearer ${tokens.compliance}`);
    const jti = (JSON.parse(Buffer.from(tokens.compliance.split('.')[1]!, 'base64url').toString()) as Json).jti;
    expect(me.json).toEqual({
      kind: 'oidc',
      subject: operators.compliance.subject,
      issuer: operatorIssuerUrl(sb.url),
      name: 'Maya Compliance',
      roles: ['compliance'],
      credentialId: jti,
      actor: `oidc:${operators.compliance.subject}`,
    });
    const issuer = await OperatorIssuer.open(sb.pool, operatorIssuerUrl(sb.url));
    const now = Math.floor(Date.now() / 1000);
    const late = await issuer.sign({
      iss: issuer.issuer,
      sub: 'late',
      aud: 'travel-rule-orchestrator',
      iat: now - 600,
      exp: now - 10,
      roles: ['viewer'],
    });
    expect((await call('GET', '/v1/me', `Bearer ${late}`)).status).toBe(200);
    // A token without a role of this API authenticates and may do nothing.
    const none = await issuer.sign({
      iss: issuer.issuer,
      sub: 'nobody',
      aud: 'travel-rule-orchestrator',
      iat: now,
      exp: now + 60,
      roles: ['other-app-admin'],
    });
    expect((await call('GET', '/v1/transfers', `Bearer ${none}`)).status).toBe(403);
  });

  it('API keys: created by an admin through the API (shown once), listed without secrets, revoked; last use recorded', async () => {
    const created = await fetch(`${orch.apiUrl}/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'core-banking', role: 'operator' }),
    });
    expect(created.status).toBe(201);
    const { key, apiKey } = (await created.json()) as Json;
    expect(key).toMatch(/^tro_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const adminActor = `oidc:${operators.admin.subject}`;
    expect(apiKey).toMatchObject({
      prefix: key.slice(0, 20),
      name: 'core-banking',
      role: 'operator',
      createdBy: adminActor,
      createdByName: 'Ada Admin',
      lastUsedAt: null,
    });
    expect((await call('GET', '/v1/me', `Bearer ${key}`)).json).toEqual({
      kind: 'api-key',
      subject: apiKey.id,
      name: 'core-banking',
      roles: ['operator'],
      credentialId: apiKey.prefix,
      actor: `apikey:${apiKey.id}`,
    });
    // The key itself is stored nowhere: only its SHA-256.
    const stored = await orch.pool.query('select * from api_keys where id = $1', [apiKey.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(key.slice(21));
    // Written after the answer, at most once a minute per key.
    await eventually(async () =>
      (await orch.pool.query('select last_used_at from api_keys where id = $1', [apiKey.id])).rows[0].last_used_at
        ? true
        : undefined,
    );
    const listed = await call('GET', '/v1/api-keys', `Bearer ${tokens.admin}`);
    expect(listed.json!.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: apiKey.id, lastUsedAt: expect.any(String) })]),
    );
    expect(JSON.stringify(listed.json)).not.toContain(key.slice(21));
    const cliList = await runCli((p) => registerApiKeyCommands(p, { pool: orch.pool }), ['api-keys', 'list']);
    expect(cliList).toMatch(
      new RegExp(`${apiKey.prefix}  operator +core-banking +created .* by Ada Admin \\(${adminActor}\\), last used 20`),
    );

    const revoked = await call('POST', `/v1/api-keys/${apiKey.prefix}/revoke`, `Bearer ${tokens.admin}`);
    expect(revoked.json).toMatchObject({
      revokedBy: adminActor,
      revokedByName: 'Ada Admin',
      revokedAt: expect.any(String),
    });
    expect((await call('GET', '/v1/me', `Bearer ${key}`)).status).toBe(401);
    const audit = await orch.pool.query(`select actor, action, details from audit_log where subject = $1 order by id`, [
      apiKey.prefix,
    ]);
    expect(audit.rows.map((r) => [r.actor, r.action])).toEqual([
      [adminActor, 'api-key.create'],
      [adminActor, 'api-key.revoke'],
    ]);
    expect(audit.rows[0].details.principal).toMatchObject({ kind: 'oidc', name: 'Ada Admin', roles: ['admin'] });
    expect((await call('POST', '/v1/api-keys', `Bearer ${tokens.admin}`)).json!.error).toMatchObject({ field: 'name' });
  });
});
