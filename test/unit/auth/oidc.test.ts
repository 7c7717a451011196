import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { OidcVerifier, claimAt, rolesFrom } from '../../../client/api/auth/oidc';
import type { OidcConfig } from '../../../auth/config';
import { AuthenticationError, UpstreamUnavailableError } from '../../../lib/errors';

/** A provider on loopback: a discovery document and a JWKS the test rotates, counting how often each is read. */
async function provider() {
  const keys: JWK[] = [];
  const reads = { discovery: 0, jwks: 0 };
  let issuerInDocument: string | undefined;
  const server: Server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/bank`;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/realms/bank/.well-known/openid-configuration') {
      reads.discovery += 1;
      return res.end(JSON.stringify({ issuer: issuerInDocument ?? base, jwks_uri: `${base}/certs` }));
    }
    if (req.url === '/realms/bank/certs') {
      reads.jwks += 1;
      return res.end(JSON.stringify({ keys }));
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/bank`;
  const newKey = async (kid: string, publish = true) => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    if (publish) keys.push({ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' });
    return { kid, privateKey };
  };
  return {
    issuer,
    reads,
    newKey,
    server,
    setDocumentIssuer: (i: string) => {
      issuerInDocument = i;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const sign = (key: { kid: string; privateKey: CryptoKey }, claims: JWTPayload, typ?: string) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, ...(typ !== undefined ? { typ } : {}) })
    .sign(key.privateKey);

describe('OIDC access tokens (client/api/auth/oidc.ts) against a provider on loopback', () => {
  let idp: Awaited<ReturnType<typeof provider>>;
  let config: OidcConfig;
  beforeAll(async () => {
    idp = await provider();
    // Keycloak-like: access tokens without a typ, so the at+jwt requirement is off for it (OPERATOR_AUTH_REQUIRE_AT_JWT=0).
    config = {
      issuer: idp.issuer,
      audience: 'tro-api',
      rolesClaim: 'realm_access.roles',
      rolePrefix: 'tro-',
      algorithms: ['RS256'],
      clockToleranceSeconds: 30,
      requireAtJwt: false,
    };
  });
  afterAll(() => idp.close());

  const claims = (over: JWTPayload = {}): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: idp.issuer,
      aud: ['tro-api', 'account'],
      sub: 'f1d2',
      iat: now,
      exp: now + 300,
      jti: 'j-1',
      preferred_username: 'mlro',
      realm_access: { roles: ['tro-compliance', 'offline_access', 'compliance'] },
      ...over,
    };
  };

  it('reads the JWKS through the discovery document once, and refetches it when a token names a key it has not seen', async () => {
    const verifier = new OidcVerifier(config, { jwksCooldownMs: 0 });
    const first = await idp.newKey('k1');
    expect(await verifier.verify(await sign(first, claims()))).toEqual({
      kind: 'oidc',
      subject: 'f1d2',
      issuer: idp.issuer,
      name: 'mlro',
      roles: ['compliance'],
      credentialId: 'j-1',
    });
    expect(idp.reads).toEqual({ discovery: 1, jwks: 1 });
    await verifier.verify(await sign(first, claims({ jti: 'j-2' })));
    expect(idp.reads).toEqual({ discovery: 1, jwks: 1 });

    // The provider rotates: a token under the new key makes the verifier read the JWKS again, once.
    const second = await idp.newKey('k2');
    expect((await verifier.verify(await sign(second, claims({ name: 'Maya' })))).name).toBe('Maya');
    expect(idp.reads.jwks).toBe(2);
    await verifier.verify(await sign(second, claims()));
    expect(idp.reads.jwks).toBe(2);

    // A key the provider does not publish is refused, whatever the token says.
    const rogue = await idp.newKey('k3', false);
    await expect(verifier.verify(await sign(rogue, claims()))).rejects.toThrow(
      new AuthenticationError('the token is signed with a key the identity provider does not publish'),
    );
  });

  it('takes access tokens only: typed at+jwt when required (the default), never an ID token (issue 25, item 7e)', async () => {
    const key = await idp.newKey('typ');
    const strict = new OidcVerifier({ ...config, requireAtJwt: undefined }, { jwksCooldownMs: 0 });
    expect((await strict.verify(await sign(key, claims(), 'at+jwt'))).subject).toBe('f1d2');
    expect((await strict.verify(await sign(key, claims(), 'application/at+jwt'))).subject).toBe('f1d2');
    await expect(strict.verify(await sign(key, claims()))).rejects.toThrow(
      /^the token is not typed as an access token: its typ is missing, not at\+jwt/,
    );
    await expect(strict.verify(await sign(key, claims(), 'JWT'))).rejects.toThrow(
      /^the token is not typed as an access token: its typ is "JWT", not at\+jwt/,
    );

    // Not required (a provider that does not type its tokens): an untyped or JWT-typed access token passes, an ID token never.
    const lenient = new OidcVerifier(config, { jwksCooldownMs: 0 });
    expect((await lenient.verify(await sign(key, claims(), 'JWT'))).subject).toBe('f1d2');
    await expect(lenient.verify(await sign(key, claims({ nonce: 'n-1' })))).rejects.toThrow(
      new AuthenticationError('an ID token is not an access token (it carries nonce)'),
    );
    await expect(lenient.verify(await sign(key, claims({ at_hash: 'x' }), 'JWT'))).rejects.toThrow(
      /an ID token is not an access token \(it carries at_hash\)/,
    );
    await expect(lenient.verify(await sign(key, claims({ typ: 'ID' })))).rejects.toThrow(
      /an ID token is not an access token \(it carries typ "ID"\)/,
    );
    await expect(lenient.verify(await sign(key, claims(), 'id_token+jwt'))).rejects.toThrow(
      /the token's typ "id_token\+jwt" is not an access token's/,
    );
    // Typed at+jwt but carrying an ID token's claim: refused too.
    await expect(strict.verify(await sign(key, claims({ nonce: 'n-2' }), 'at+jwt'))).rejects.toThrow(
      /an ID token is not an access token/,
    );
  });

  it('takes roles from a dotted claim path with a prefix, or a space-separated string', () => {
    expect(claimAt({ realm_access: { roles: ['a'] } }, 'realm_access.roles')).toEqual(['a']);
    expect(claimAt({ 'https://bank.example/roles': ['x'] }, 'https://bank.example/roles')).toEqual(['x']);
    expect(rolesFrom(['tro-admin', 'tro-viewer', 'admin', 'tro-root'], 'tro-')).toEqual(['admin', 'viewer']);
    expect(rolesFrom('viewer operator other', '')).toEqual(['viewer', 'operator']);
    expect(rolesFrom({ admin: true }, '')).toEqual([]);
  });

  it("a provider that cannot be read, or whose document names another issuer, is a 503, not the caller's fault", async () => {
    const key = await idp.newKey('k4');
    const token = await sign(key, claims());
    await expect(
      new OidcVerifier({ ...config, issuer: 'http://127.0.0.1:1/realms/none' }).verify(token),
    ).rejects.toBeInstanceOf(UpstreamUnavailableError);
    idp.setDocumentIssuer('https://elsewhere.example');
    try {
      await expect(new OidcVerifier(config).verify(token)).rejects.toThrow(
        /names issuer "https:\/\/elsewhere.example", not OPERATOR_AUTH_ISSUER/,
      );
    } finally {
      idp.setDocumentIssuer(idp.issuer);
    }
    // The failure is not kept: the next request reads the document again.
    const verifier = new OidcVerifier(config);
    idp.setDocumentIssuer('https://elsewhere.example');
    await expect(verifier.verify(token)).rejects.toBeInstanceOf(UpstreamUnavailableError);
    idp.setDocumentIssuer(idp.issuer);
    expect((await verifier.verify(token)).subject).toBe('f1d2');
  });
});
