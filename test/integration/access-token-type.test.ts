import { randomBytes } from 'node:crypto';
import { DEFAULT_OPERATOR_AUDIENCE, OperatorIssuer } from '../../sandbox/auth/operator-issuer';
import { operatorIssuerUrl } from '../../sandbox/server';
import {
  groupSeed,
  operatorSeed,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Json;

describe('the API takes access tokens only: typed at+jwt (RFC 9068), never an ID token (issue 25, item 7e)', () => {
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let issuer: OperatorIssuer;

  const me = async (token: string) => {
    const r = await fetch(`${orch.apiUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, body: (await r.json()) as Json };
  };
  /** Claims of a token for this API, as the sandbox's identity provider would put them. */
  const claims = (extra: Json = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: issuer.issuer,
      sub: operators.compliance.subject,
      aud: DEFAULT_OPERATOR_AUDIENCE,
      iat: now,
      nbf: now,
      exp: now + 600,
      jti: randomBytes(8).toString('hex'),
      name: 'Maya Compliance',
      roles: ['compliance'],
      ...extra,
    };
  };

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA] },
      auth: sandboxOidc(sb),
    });
    issuer = await OperatorIssuer.open(sb.pool, operatorIssuerUrl(sb.url));
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('the development identity provider mints access tokens typed at+jwt, and the API takes them', async () => {
    const token = await sb.operatorToken(operators.compliance);
    expect(header(token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    expect(await me(token)).toMatchObject({
      status: 200,
      body: { kind: 'oidc', subject: operators.compliance.subject, roles: ['compliance'] },
    });
  });

  it('refuses a token the provider signed but did not type as an access token, and an ID token however typed', async () => {
    const untyped = await me(await issuer.sign(claims(), 'JWT'));
    expect(untyped.status).toBe(401);
    expect(untyped.body.error.message).toMatch(
      /^the token is not typed as an access token: its typ is "JWT", not at\+jwt/,
    );
    // An ID token from the same provider, for a client whose id is this API's audience: signed, fresh, and refused.
    const idToken = await me(
      await issuer.sign(claims({ nonce: 'n-0S6_WzA2Mj', auth_time: Math.floor(Date.now() / 1000) }), 'JWT'),
    );
    expect(idToken.status).toBe(401);
    const typedIdToken = await me(
      await issuer.sign(claims({ nonce: 'n-0S6_WzA2Mj', at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' })),
    );
    expect(typedIdToken.status).toBe(401);
    expect(typedIdToken.body.error.message).toBe('an ID token is not an access token (it carries nonce)');
  });
});
