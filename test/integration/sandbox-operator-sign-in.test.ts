import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { groupSeed, operatorSeed, startSandbox, type RunningSandbox } from '../harness/platform';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});
const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe("sandbox: the operators' identity provider signs people in with the authorization code flow and PKCE", () => {
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  g.seed.operatorApps = [
    {
      clientId: 'travel-rule-console',
      redirectUris: ['http://127.0.0.1/console/', 'https://console.bank.example/console/'],
    },
  ];
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox(g.seed);
  });
  afterAll(async () => sb?.close());

  const authorizeParams = (over: Record<string, string> = {}) => {
    const { verifier, challenge } = pkce();
    const params = {
      response_type: 'code',
      client_id: 'travel-rule-console',
      redirect_uri: 'http://127.0.0.1:40123/console/',
      state: 'st-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...over,
    };
    return { verifier, params };
  };
  /** Signs in on the provider's page; the redirect's query (code, state, iss) or the answer when there is none. */
  const signIn = async (params: Record<string, string>, username: string, password: string) => {
    const r = await fetch(`${sb.url}/oidc/authorize`, form({ ...params, username, password }));
    const location = r.headers.get('location');
    return {
      status: r.status,
      location,
      query: location ? Object.fromEntries(new URL(location).searchParams) : {},
      text: location ? '' : await r.text(),
    };
  };
  const exchange = (fields: Record<string, string>) =>
    fetch(
      `${sb.url}/oidc/token`,
      form({ grant_type: 'authorization_code', client_id: 'travel-rule-console', ...fields }),
    );

  it('discovery names the endpoints; the sign-in page carries the request; a code becomes a token naming the person', async () => {
    const discovery = (await (await fetch(`${sb.url}/oidc/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(discovery).toMatchObject({
      authorization_endpoint: `${sb.url}/oidc/authorize`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    const { verifier, params } = authorizeParams();
    const page = await fetch(`${sb.url}/oidc/authorize?${new URLSearchParams(params)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('name="code_challenge" value="' + params.code_challenge + '"');

    // A loopback redirect URI matches the registered one on any port (RFC 8252); the code comes back with the state.
    const ok = await signIn(params, operators.compliance.email!, operators.compliance.clientSecret);
    expect(ok.status).toBe(303);
    expect(ok.location!.startsWith('http://127.0.0.1:40123/console/?')).toBe(true);
    expect(ok.query).toMatchObject({ state: 'st-1', iss: `${sb.url}/oidc` });

    const r = await exchange({ code: ok.query.code!, redirect_uri: params.redirect_uri, code_verifier: verifier });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const { access_token: token } = (await r.json()) as { access_token: string };
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${sb.url}/oidc/jwks`)), {
      issuer: `${sb.url}/oidc`,
      audience: 'travel-rule-orchestrator',
    });
    expect(payload).toMatchObject({
      sub: operators.compliance.subject,
      name: 'Maya Compliance',
      roles: ['compliance'],
      azp: 'travel-rule-console',
    });

    // The code is single-use.
    const again = await exchange({ code: ok.query.code!, redirect_uri: params.redirect_uri, code_verifier: verifier });
    expect({ status: again.status, error: ((await again.json()) as { error: string }).error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });

  it('refuses a wrong verifier, another redirect URI and another client at the exchange, each burning the code', async () => {
    const wrongs: Record<string, string>[] = [
      { code_verifier: pkce().verifier },
      { redirect_uri: 'http://127.0.0.1:40124/console/' },
      { client_id: 'someone-else' },
    ];
    for (const wrong of wrongs) {
      const { verifier, params } = authorizeParams();
      const { query } = await signIn(params, operators.viewer.clientId, operators.viewer.clientSecret);
      const bad = await exchange({
        code: query.code!,
        redirect_uri: params.redirect_uri,
        code_verifier: verifier,
        ...wrong,
      });
      expect({ wrong, status: bad.status, error: ((await bad.json()) as { error: string }).error }).toEqual({
        wrong,
        status: 400,
        error: 'invalid_grant',
      });
      // The right request after a wrong one finds the code gone.
      const late = await exchange({ code: query.code!, redirect_uri: params.redirect_uri, code_verifier: verifier });
      expect(late.status).toBe(400);
    }
  });

  it('never sends anything to an unregistered redirect URI, requires PKCE and state, and refuses a wrong password on its page', async () => {
    for (const redirect of [
      'https://evil.example/console/',
      'http://127.0.0.1:40123/other/',
      'https://console.bank.example:8443/console/',
      'http://127.0.0.1:40123/console/#x',
    ]) {
      const { params } = authorizeParams({ redirect_uri: redirect });
      const r = await fetch(`${sb.url}/oidc/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      expect({ redirect, status: r.status, location: r.headers.get('location') }).toEqual({
        redirect,
        status: 400,
        location: null,
      });
      expect((await signIn(params, operators.admin.clientId, operators.admin.clientSecret)).status).toBe(400);
    }
    const unknownApp = await fetch(
      `${sb.url}/oidc/authorize?${new URLSearchParams(authorizeParams({ client_id: 'unknown-app' }).params)}`,
    );
    expect(unknownApp.status).toBe(400);

    // With a registered redirect URI, the errors go back to the app, with the state.
    for (const [over, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ state: '' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
    ] as const) {
      const { params } = authorizeParams(over);
      const r = await fetch(`${sb.url}/oidc/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      expect(r.status).toBe(303);
      expect(new URL(r.headers.get('location')!).searchParams.get('error')).toBe(error);
    }

    const { params } = authorizeParams();
    const wrong = await signIn(params, operators.compliance.email!, 'not-the-password');
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeNull();
    expect(wrong.text).toContain('Unknown user or wrong password.');
    // What the page echoes back is escaped.
    const echoed = await signIn(params, '<script>alert(1)</script>', 'x');
    expect(echoed.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(echoed.text).not.toContain('<script>alert(1)</script>');
  });
});
