import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { listApiKeys, revokeApiKey } from '../../../auth/api-key-store';
import { auditActor, ROLES } from '../../../lib/principal';
import { createApiKey } from '../auth/api-keys';
import { principalOf } from '../auth/plugin';
import { access } from '../auth/roles';

const Role = Type.Union(ROLES.map((r) => Type.Literal(r)));
const Nullable = Type.Union([Type.String(), Type.Null()]);
const ApiKeyInfo = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'Public: names the key in logs and the audit log' }),
  name: Type.String(),
  role: Role,
  createdAt: Type.String(),
  createdBy: Type.String({
    description: 'Who created it, by a stable id as the audit log records it: oidc:<sub>, apikey:<id>, cli:<OS user>',
  }),
  createdByName: Type.Union([Type.String(), Type.Null()], {
    description: "For display: the creator's name at the time",
  }),
  revokedAt: Nullable,
  revokedBy: Nullable,
  revokedByName: Nullable,
  lastUsedAt: Type.Union([Type.String(), Type.Null()], { description: 'Recorded at most once a minute' }),
});
const Principal = Type.Object({
  kind: Type.String(),
  subject: Type.String(),
  issuer: Type.Optional(Type.String()),
  name: Type.String(),
  roles: Type.Array(Type.String()),
  credentialId: Type.String(),
  actor: Type.String({
    description:
      'How the audit log, decisions and API keys record the caller (oidc:<sub>, apikey:<id>); the name is for display',
  }),
});
const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for, e.g. core-banking' }),
    role: Role,
  },
  { additionalProperties: false },
);
// The id or the prefix, nothing else: other text reached PostgreSQL (U+0000 answered 500).
const KeyParams = Type.Object({
  key: Type.String({
    pattern: '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|tro_[0-9a-f]{16})$',
    description: "The key's id or prefix (tro_…)",
  }),
});

/** Who the caller is, and the API keys of services (admin): create (the key is answered once), list, revoke. */
export function apiKeyRoutes(app: FastifyInstance, deps: { pool: Pool }) {
  app.get(
    '/v1/me',
    {
      config: { roles: access.read },
      schema: {
        tags: ['access'],
        summary: 'The caller as the API authenticated it: name, roles, credential',
        response: { 200: Principal },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return { ...principal, actor: auditActor(principal) };
    },
  );

  app.get(
    '/v1/api-keys',
    {
      config: { roles: access.admin },
      schema: {
        tags: ['access'],
        summary: 'API keys (never their secrets), newest first',
        querystring: Type.Object(
          { revoked: Type.Optional(Type.Union([Type.Literal('include'), Type.Literal('exclude')])) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(ApiKeyInfo) }) },
      },
    },
    async (request) => ({
      data: await listApiKeys(deps.pool, {
        includeRevoked: (request.query as { revoked?: string }).revoked === 'include',
      }),
    }),
  );

  app.post(
    '/v1/api-keys',
    {
      config: { roles: access.admin },
      schema: {
        tags: ['access'],
        summary: 'Create an API key for a service; the answer is the only time the key is shown',
        body: CreateBody,
        response: { 201: Type.Object({ key: Type.String(), apiKey: ApiKeyInfo }) },
      },
    },
    async (request, reply) => {
      const { key, info } = await createApiKey(
        deps.pool,
        request.body as Static<typeof CreateBody>,
        principalOf(request),
      );
      return reply.code(201).header('cache-control', 'no-store').send({ key, apiKey: info });
    },
  );

  app.post(
    '/v1/api-keys/:key/revoke',
    {
      config: { roles: access.admin },
      schema: {
        tags: ['access'],
        summary: 'Revoke an API key (effective from the next request)',
        params: KeyParams,
        response: { 200: ApiKeyInfo },
      },
    },
    async (request) => revokeApiKey(deps.pool, (request.params as Static<typeof KeyParams>).key, principalOf(request)),
  );
}
