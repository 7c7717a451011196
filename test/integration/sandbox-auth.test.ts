import { groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

const post = (url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('sandbox: OAuth client credentials, bearer checks, viewer', () => {
  const group = groupSeed();
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  const token = async (audience: string, c = group.gatewayUser) => {
    const r = await post(`${sb.url}/oauth/token`, {
      client_id: c.clientId,
      client_secret: c.clientSecret,
      grant_type: 'client_credentials',
      audience,
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it('issues a 24-hour bearer token for the API audience, also from a form-encoded request', async () => {
    const t = await token(sb.url);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ expires_in: 86400, token_type: 'Bearer' });
    const form = await post(
      `${sb.url}/oauth/token`,
      new URLSearchParams({
        client_id: group.gatewayUser.clientId,
        client_secret: group.gatewayUser.clientSecret,
        grant_type: 'client_credentials',
        audience: sb.url,
      }).toString(),
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(form.status).toBe(200);
  });

  it('refuses a wrong secret, an unknown audience, a missing parameter and another grant type, in Auth0 shapes', async () => {
    expect(await token(sb.url, { ...group.gatewayUser, clientSecret: 'wrong-secret-wrong-secret' })).toEqual({
      status: 401,
      body: { error: 'access_denied', error_description: 'Unauthorized' },
    });
    expect((await token('https://api.elsewhere.example')).status).toBe(403);
    const missing = await post(`${sb.url}/oauth/token`, {
      client_id: 'x',
      grant_type: 'client_credentials',
      audience: sb.url,
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Missing required parameter: client_secret',
    });
    const grant = await post(`${sb.url}/oauth/token`, {
      client_id: 'x',
      client_secret: 'y',
      grant_type: 'password',
      audience: sb.url,
    });
    expect(((await grant.json()) as { error: string }).error).toBe('unsupported_grant_type');
  });

  it('returns the viewer record; the gateway user acts for its subsidiaries but not for others', async () => {
    const { body } = await token(sb.url);
    const r = await fetch(`${sb.url}/auth/viewer`, {
      headers: { authorization: `Bearer ${String(body.access_token)}` },
    });
    expect(r.status).toBe(200);
    const viewer = (await r.json()) as {
      did: string;
      vasps: string[];
      fields: { fieldName: string; values: { value: string; issuer: string; expirationDate: null }[] }[];
      roles: { vaspDID: string; permissions: string[] }[];
    };
    expect(viewer.did).toBe(group.gatewayUser.did);
    expect(viewer.vasps.sort()).toEqual([group.gateway, group.subA, group.subB].sort());
    expect(viewer.fields.map((f) => f.fieldName)).toEqual(['role', 'jobTitle', 'name', 'email']);
    expect(viewer.fields.find((f) => f.fieldName === 'email')!.values[0]).toMatchObject({
      value: 'ops@gateway.example',
      expirationDate: null,
    });
    expect(viewer.roles.find((x) => x.vaspDID === group.subA)!.permissions).toContain('address.uploadAddressList');
  });

  it('answers 401 in the network error shape without a token, with a forged one, and with a PII-audience token', async () => {
    const none = await fetch(`${sb.url}/auth/viewer`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ err: { name: 'UnauthorizedError', code: 401 } });
    const forged = await fetch(`${sb.url}/auth/viewer`, {
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' },
    });
    expect(forged.status).toBe(401);
    const pii = await token(`${sb.url}/pii`);
    expect(pii.status).toBe(200);
    const wrongAudience = await fetch(`${sb.url}/auth/viewer`, {
      headers: { authorization: `Bearer ${String(pii.body.access_token)}` },
    });
    expect(wrongAudience.status).toBe(401);
    expect(((await wrongAudience.json()) as { err: { message: string } }).err.message).toMatch(/audience/);
  });
});
