import { OPERATOR_DID } from './operator';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyError } from 'fastify';
import type { HttpsOptions } from '../lib/api-transport';
import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import { NetworkError, notFound } from './errors';
import { bearerGuard } from './auth/guard';
import { testRouteGate, testRoutesOn } from './auth/test-routes';
import { TokenService } from './auth/tokens';
import { operatorIssuerRoutes, tokenRoute, viewerRoute } from './auth/routes';
import { OperatorIssuer } from './auth/operator-issuer';
import { directoryPublicRoutes, directoryRoutes } from './directory/routes';
import { escrowRoutes } from './escrow/routes';
import { addressBookPublicRoutes, addressBookRoutes } from './address-book';
import { transactionRoutes } from './transactions';
import { piiRoutes } from './pii-store';
import { webhookPublicRoutes, webhookRoutes } from './webhooks';
import { counterpartyRoutes } from './counterparties';
import { rulesRoutes } from './rules/routes';
import { reviewRoutes } from './reviews/routes';
import { jurisdictionPublicRoutes, validationRoutes } from './jurisdictions/routes';
import type { SandboxConfig } from './config';
import type { SandboxContext } from './context';
import { Faults, faultRoutes } from './faults';
import { nestedRoutingPublicRoutes, nestedRoutingRoutes } from './nested-routing';
import { RateLimiter, rateLimitRoutes } from './rate-limit';
import { registerOpenApi } from './openapi';
import { refuseBadInput } from './input';

export interface SandboxDeps {
  pool: Pool;
  config: SandboxConfig;
  logger: Logger;
  /** Serve HTTPS (TLS_CERT_FILE, TLS_KEY_FILE): what the orchestrator requires of a network off loopback. */
  https?: HttpsOptions;
}

/** Where the sandbox's operator identity provider lives: what OPERATOR_AUTH_ISSUER names to use it. */
export const operatorIssuerUrl = (publicUrl: string) => `${publicUrl}/oidc`;

/**
 * The network's service side, local and faithful: the public API at `/`, the personal-data service at `/pii`.
 * Each part registers its routes in its own module; this file only wires them and the error shape.
 */
export async function buildSandbox(deps: SandboxDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 10 * 1024 * 1024,
    ...(deps.https ? { https: deps.https } : {}),
  }) as unknown as FastifyInstance;
  const tokens = await TokenService.open(deps.pool, deps.config.publicUrl);
  // One count per credential over the API and the personal-data service, as the network's quota.
  const limiter = new RateLimiter(deps.config.rateLimit);

  // Auth0 accepts form-encoded token requests as well as JSON.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.setErrorHandler((error: FastifyError | NetworkError, request, reply) => {
    if (error instanceof NetworkError) return reply.code(error.status).headers(error.headers).send(error.toBody());
    // fastify's own refusals (schema validation, body limits, content types) in the same shape, err.stack included.
    if ((error as FastifyError).validation)
      return reply.code(400).send(new NetworkError(400, 'ValidationError', error.message).toBody());
    const status = (error as FastifyError).statusCode;
    if (status && status < 500)
      return reply.code(status).send(new NetworkError(status, error.name, error.message).toBody());
    request.log.error({ err: error }, 'sandbox request failed');
    return reply.code(500).send(new NetworkError(500, 'InternalServerError', 'internal error').toBody());
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(notFound(`${request.method} ${request.url} not found`).toBody()),
  );

  // Before any route: @fastify/swagger collects the routes as they are added; hooks apply to routes added after them.
  await registerOpenApi(app);
  refuseBadInput(app);
  const faults = new Faults(deps.config.faults === true);
  const ctx: SandboxContext = { pool: deps.pool, config: deps.config, tokens, logger: deps.logger, faults };
  // Before anything else: a refused test route runs no other hook, and none is registered while they are off.
  testRouteGate(app, deps.config);
  const testRoutes = testRoutesOn(deps.config);
  // First after the gate, so its hooks run before every route's (and the auth guards').
  faultRoutes(app, faults, { testRoutes });

  app.get('/healthz', async () => ({ ok: true }));
  tokenRoute(app, { pool: deps.pool, tokens, audiences: [deps.config.publicUrl, deps.config.piiUrl] });
  // Not the network's: the identity provider of the orchestrator's operators, for development and tests.
  operatorIssuerRoutes(app, {
    pool: deps.pool,
    issuer: await OperatorIssuer.open(deps.pool, operatorIssuerUrl(deps.config.publicUrl)),
  });

  // Routes that authenticate in their own way (e.g. upload URLs carrying their own credential) register here.
  await addressBookPublicRoutes(app, ctx);
  await directoryPublicRoutes(app, ctx);
  await webhookPublicRoutes(app, ctx);
  await counterpartyRoutes(app, ctx);
  await nestedRoutingPublicRoutes(app, ctx);
  jurisdictionPublicRoutes(app);
  if (testRoutes) rateLimitRoutes(app, limiter);

  // The network's API: bearer tokens for the API audience. Each part adds one line.
  await app.register(async (api) => {
    api.addHook('preHandler', bearerGuard(deps.pool, tokens, deps.config.publicUrl, limiter));
    viewerRoute(api, { pool: deps.pool, issuer: OPERATOR_DID });
    addressBookRoutes(api, ctx);
    directoryRoutes(api, ctx);
    transactionRoutes(api, ctx);
    webhookRoutes(api, ctx);
    nestedRoutingRoutes(api, ctx);
    rulesRoutes(api, ctx);
    reviewRoutes(api, ctx);
    validationRoutes(api, ctx);
  });

  // The personal-data service: bearer tokens for the PII audience. Each part adds one line.
  await app.register(
    async (pii) => {
      pii.addHook('preHandler', bearerGuard(deps.pool, tokens, deps.config.piiUrl, limiter));
      await escrowRoutes(pii, ctx);
      piiRoutes(pii, ctx);
    },
    { prefix: '/pii' },
  );
  void ctx;

  return app;
}
