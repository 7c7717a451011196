import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type } from 'typebox';
import { authenticateClient, TOKEN_TTL_SECONDS, type TokenService } from '../auth/tokens';
import { accessOf } from '../auth/guard';
import { authenticateOperatorClient, DEFAULT_OPERATOR_AUDIENCE, OPERATOR_TOKEN_TTL_SECONDS, type OperatorIssuer } from '../auth/operator-issuer';

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
});

/** `POST /oauth/token`: the Auth0 client-credentials exchange, with Auth0's error bodies. Public. */
export function tokenRoute(app: FastifyInstance, deps: AuthDeps): void {
  app.post('/oauth/token', { schema: { body: TokenRequest } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, string | undefined>;
    for (const p of ['client_id', 'client_secret', 'grant_type', 'audience']) {
      if (!body[p]) return reply.code(400).send({ error: 'invalid_request', error_description: `Missing required parameter: ${p}` });
    }
    if (body.grant_type !== 'client_credentials') {
      return reply.code(400).send({ error: 'unsupported_grant_type', error_description: 'Unsupported grant type: ' + body.grant_type });
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

/** `GET /auth/viewer`: the Viewer record of interface.md. */
export function viewerRoute(app: FastifyInstance, deps: { pool: Pool; issuer: string }): void {
  app.get('/auth/viewer', async (request) => {
    const access = accessOf(request);
    const { rows } = await deps.pool.query<{ name: string; email: string; role: string; job_title: string; issued_at: Date }>(
      'select name, email, role, job_title, issued_at from users where did = $1',
      [access.userDid],
    );
    const user = rows[0];
    const field = (fieldName: string, value: string) => ({
      fieldName,
      values: [{ value, issuer: deps.issuer, issuanceDate: user!.issued_at.toISOString(), expirationDate: null }],
    });
    return {
      did: access.userDid,
      fields: user
        ? [field('role', user.role), field('jobTitle', user.job_title), field('name', user.name), field('email', user.email)]
        : [],
      vasps: access.vasps(),
      roles: access.roles(),
    };
  });
}

/**
 * The operators' OIDC issuer at `/oidc` (sandbox/auth/operator-issuer.ts), public like any identity provider's:
 * `GET /oidc/.well-known/openid-configuration`, `GET /oidc/jwks`, and `POST /oidc/token` (client credentials, the
 * client's secret in the body or HTTP Basic, an optional `audience`).
 */
export function operatorIssuerRoutes(app: FastifyInstance, deps: { pool: Pool; issuer: OperatorIssuer }): void {
  app.get('/oidc/.well-known/openid-configuration', async () => deps.issuer.discovery());
  app.get('/oidc/jwks', async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(deps.issuer.jwks()));
  app.post('/oidc/token', { schema: { body: TokenRequest } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, string | undefined>;
    let { client_id: clientId, client_secret: clientSecret } = body;
    const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    }
    if (body.grant_type !== 'client_credentials') {
      return reply.code(400).send({ error: 'unsupported_grant_type', error_description: `grant_type must be client_credentials, not ${String(body.grant_type)}` });
    }
    if (!clientId || !clientSecret) return reply.code(400).send({ error: 'invalid_request', error_description: 'client_id and client_secret are required' });
    const client = await authenticateOperatorClient(deps.pool, clientId, clientSecret);
    if (!client) return reply.code(401).send({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    const token = await deps.issuer.issue(client, body.audience || DEFAULT_OPERATOR_AUDIENCE);
    return reply.header('cache-control', 'no-store').send({ access_token: token, token_type: 'Bearer', expires_in: OPERATOR_TOKEN_TTL_SECONDS });
  });
}
