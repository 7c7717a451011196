import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import { Type } from 'typebox';
import { authenticateClient, TOKEN_TTL_SECONDS, type TokenService } from './tokens';
import { accessOf } from './guard';
import {
  authenticateOperator,
  authenticateOperatorClient,
  DEFAULT_OPERATOR_AUDIENCE,
  OPERATOR_TOKEN_TTL_SECONDS,
  type OperatorIssuer,
} from './operator-issuer';
import { AuthorizationCodes, redirectUriMatches, signInPage, type AuthorizationRequest } from './operator-sign-in';
import { readUser, registeredRedirectUris } from './store';

interface AuthDeps {
  pool: Pool;
  tokens: TokenService;
  audiences: string[];
}

const TokenRequest = Type.Object({
  grant_type: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
  audience: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ maxLength: 256 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 128 })),
});

const AuthorizeParams = Type.Object({
  response_type: Type.Optional(Type.String({ maxLength: 64 })),
  client_id: Type.Optional(Type.String({ maxLength: 256 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
  scope: Type.Optional(Type.String({ maxLength: 1024 })),
  state: Type.Optional(Type.String({ maxLength: 1024 })),
  code_challenge: Type.Optional(Type.String({ maxLength: 128 })),
  code_challenge_method: Type.Optional(Type.String({ maxLength: 16 })),
  audience: Type.Optional(Type.String({ maxLength: 256 })),
  nonce: Type.Optional(Type.String({ maxLength: 1024 })),
  username: Type.Optional(Type.String({ maxLength: 320 })),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
});

/** `POST /oauth/token`: the Auth0 client-credentials exchange, with Auth0's error bodies. Public. */
export function tokenRoute(app: FastifyInstance, deps: AuthDeps): void {
  app.post('/oauth/token', { schema: { body: TokenRequest } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, string | undefined>;
    for (const p of ['client_id', 'client_secret', 'grant_type', 'audience']) {
      if (!body[p])
        return reply
          .code(400)
          .send({ error: 'invalid_request', error_description: `Missing required parameter: ${p}` });
    }
    if (body.grant_type !== 'client_credentials') {
      return reply
        .code(400)
        .send({ error: 'unsupported_grant_type', error_description: 'Unsupported grant type: ' + body.grant_type });
    }
    if (!deps.audiences.includes(body.audience!)) {
      return reply.code(403).send({ error: 'access_denied', error_description: `Service not found: ${body.audience}` });
    }
    const userDid = await authenticateClient(deps.pool, body.client_id!, body.client_secret!);
    if (!userDid) return reply.code(401).send({ error: 'access_denied', error_description: 'Unauthorized' });
    const accessToken = await deps.tokens.issue({ userDid, clientId: body.client_id!, audience: body.audience! });
    return { access_token: accessToken, expires_in: TOKEN_TTL_SECONDS, token_type: 'Bearer' };
  });
}

/** `GET /auth/viewer`: the network's Viewer record. */
export function viewerRoute(app: FastifyInstance, deps: { pool: Pool; issuer: string }): void {
  app.get('/auth/viewer', { schema: { summary: "The Viewer record of the token's user" } }, async (request) => {
    const access = accessOf(request);
    const user = await readUser(deps.pool, access.userDid);
    const field = (fieldName: string, value: string) => ({
      fieldName,
      values: [{ value, issuer: deps.issuer, issuanceDate: user!.issued_at.toISOString(), expirationDate: null }],
    });
    return {
      did: access.userDid,
      fields: user
        ? [
            field('role', user.role),
            field('jobTitle', user.job_title),
            field('name', user.name),
            field('email', user.email),
          ]
        : [],
      vasps: access.vasps(),
      roles: access.roles(),
    };
  });
}

/**
 * The operators' OIDC issuer at `/oidc` (sandbox/auth/operator-issuer.ts), public like any identity provider's:
 * `GET /oidc/.well-known/openid-configuration`, `GET /oidc/jwks`, `GET|POST /oidc/authorize` (the sign-in page of the
 * authorization code flow with PKCE, for registered apps such as the console) and `POST /oidc/token` (client
 * credentials with the client's secret in the body or HTTP Basic and an optional `audience`; or an authorization code
 * with its verifier). Discovery, keys and tokens answer any origin, as a provider's do for single-page apps.
 */
export function operatorIssuerRoutes(app: FastifyInstance, deps: { pool: Pool; issuer: OperatorIssuer }): void {
  const codes = new AuthorizationCodes();
  const anyOrigin = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*');
  app.get('/oidc/.well-known/openid-configuration', async (_request, reply) =>
    anyOrigin(reply).send(deps.issuer.discovery()),
  );
  app.get('/oidc/jwks', async (_request, reply) =>
    anyOrigin(reply).header('cache-control', 'public, max-age=300').send(deps.issuer.jwks()),
  );

  /** The request's parameters checked in the order OAuth asks for: nothing is sent to a redirect URI not registered. */
  const checkAuthorization = async (
    params: Record<string, string | undefined>,
    reply: FastifyReply,
  ): Promise<AuthorizationRequest | undefined> => {
    const page = (status: number, message: string) =>
      reply
        .code(status)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          `<!doctype html><title>Sign-in request refused</title><h1>Sign-in request refused</h1><p id="error">${message}</p>`,
        );
    const clientId = params.client_id;
    const registered = clientId ? await registeredRedirectUris(deps.pool, clientId) : undefined;
    if (!clientId || !registered) return void page(400, 'client_id names no registered application.');
    const redirectUri = params.redirect_uri ?? '';
    if (!redirectUriMatches(registered, redirectUri))
      return void page(400, 'redirect_uri is not registered for this application.');
    const fail = (error: string, description: string) => {
      const to = new URL(redirectUri);
      to.searchParams.set('error', error);
      to.searchParams.set('error_description', description);
      if (params.state) to.searchParams.set('state', params.state);
      return void reply.code(303).header('location', to.toString()).send();
    };
    if (params.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    if (params.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge ?? '')) {
      return fail(
        'invalid_request',
        'PKCE is required: code_challenge (43 characters, base64url) with code_challenge_method S256',
      );
    }
    if (!params.state || params.state.length > 512)
      return fail('invalid_request', 'state is required (at most 512 characters)');
    return {
      clientId,
      redirectUri,
      state: params.state,
      codeChallenge: params.code_challenge!,
      ...(params.audience ? { audience: params.audience } : {}),
    };
  };
  // form-action covers the redirect that follows the form, so it names the app's origin too.
  const html = (reply: FastifyReply, status: number, body: string, req: AuthorizationRequest) =>
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header(
        'content-security-policy',
        `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(req.redirectUri).origin}; frame-ancestors 'none'`,
      )
      .send(body);

  app.get('/oidc/authorize', { schema: { querystring: AuthorizeParams } }, async (request, reply) => {
    const req = await checkAuthorization(request.query as Record<string, string | undefined>, reply);
    if (req) return html(reply, 200, signInPage(req), req);
    return reply;
  });
  app.post('/oidc/authorize', { schema: { body: AuthorizeParams } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, string | undefined>;
    const req = await checkAuthorization(body, reply);
    if (!req) return reply;
    const operator =
      body.username && body.password ? await authenticateOperator(deps.pool, body.username, body.password) : undefined;
    if (!operator)
      return html(
        reply,
        401,
        signInPage(req, { error: 'Unknown user or wrong password.', username: body.username }),
        req,
      );
    const to = new URL(req.redirectUri);
    to.searchParams.set('code', codes.issue(req, operator));
    to.searchParams.set('state', req.state);
    to.searchParams.set('iss', deps.issuer.issuer);
    return reply.code(303).header('location', to.toString()).header('cache-control', 'no-store').send();
  });

  app.post('/oidc/token', { schema: { body: TokenRequest } }, async (request, reply) => {
    anyOrigin(reply).header('cache-control', 'no-store');
    const body = (request.body ?? {}) as Record<string, string | undefined>;
    if (body.grant_type === 'authorization_code') {
      for (const p of ['code', 'client_id', 'redirect_uri', 'code_verifier']) {
        if (!body[p]) return reply.code(400).send({ error: 'invalid_request', error_description: `${p} is required` });
      }
      const redeemed = codes.redeem({
        code: body.code!,
        clientId: body.client_id!,
        redirectUri: body.redirect_uri!,
        codeVerifier: body.code_verifier!,
      });
      if ('error' in redeemed)
        return reply.code(400).send({ error: 'invalid_grant', error_description: redeemed.error });
      const token = await deps.issuer.issue(
        redeemed.operator,
        redeemed.audience || DEFAULT_OPERATOR_AUDIENCE,
        body.client_id,
      );
      return reply.send({ access_token: token, token_type: 'Bearer', expires_in: OPERATOR_TOKEN_TTL_SECONDS });
    }
    let { client_id: clientId, client_secret: clientSecret } = body;
    const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    }
    if (body.grant_type !== 'client_credentials') {
      return reply.code(400).send({
        error: 'unsupported_grant_type',
        error_description: `grant_type must be client_credentials or authorization_code, not ${String(body.grant_type)}`,
      });
    }
    if (!clientId || !clientSecret)
      return reply
        .code(400)
        .send({ error: 'invalid_request', error_description: 'client_id and client_secret are required' });
    const client = await authenticateOperatorClient(deps.pool, clientId, clientSecret);
    if (!client)
      return reply.code(401).send({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    const token = await deps.issuer.issue(client, body.audience || DEFAULT_OPERATOR_AUDIENCE);
    return reply.send({ access_token: token, token_type: 'Bearer', expires_in: OPERATOR_TOKEN_TTL_SECONDS });
  });
}
