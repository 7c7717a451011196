import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { Pool } from 'pg';
import type { GroupConfig } from '../../config';
import type { Keystore } from '../../keys';
import type { TransferContext } from '../../outgoing/context';
import type { Logger } from '../../lib/logger';
import { errorHandler } from './errors';
import { requireForwardedHttps } from './forwarded-https';
import { addressBookRoutes } from './routes/address-book';
import { checkRoutes } from './routes/checks';
import { codecRoutes } from './routes/codec';
import { agentRoutes } from './routes/agent';
import { healthRoutes } from './routes/health';
import { notificationWebhookRoutes } from './routes/notification-webhook';
import { transferRoutes } from './routes/transfers';
import { keyRoutes } from './routes/keys';
import { incomingRoutes } from './routes/incoming';
import { listRoutes } from './routes/lists';
import { kpiRoutes } from './routes/kpis';
import { consoleRoutes, type ConsoleSettings } from './routes/console';
import type { IncomingConfig } from '../../incoming/config';
import type { WebhookConfig } from '../../webhooks/config';
import { healthzRateLimit, type ApiTransportConfig, type HttpsOptions } from '../../lib/api-transport';
import { TooManyRequestsError } from '../../lib/errors';
import type { OperatorAuthConfig } from '../../auth/config';
import { createAuthenticator } from './auth/authenticator';
import { BEARER_SCHEME, installAuth, type AuthFailure } from './auth/plugin';
import { AuthFailureThrottle } from './auth/failure-throttle';
import { apiKeyRoutes } from './routes/api-keys';
import { counterpartyRoutes } from './routes/counterparties';
import { policyRoutes } from './routes/policies';
import type { Pricing } from '../../pricing';
import type { JurisdictionConfig } from '../../jurisdictions/config';
import { createDecideDeps, fiatOf } from '../../policy/sources';
import { traceRequests } from './tracing';
import { walletProofRoutes } from './routes/wallet-proofs';
import { loadWalletProofConfig, type WalletProofConfig } from '../../wallet-proofs/config';
import { depositRoutes } from './routes/deposits';
import { loadDepositConfig, type DepositConfig } from '../../deposits/config';
import { createPricing } from '../../pricing';
import { loadPricingConfig } from '../../pricing/config';

export interface ApiDeps {
  temporal: Client;
  pool: Pool;
  codec: PayloadCodec;
  taskQueue: string;
  logger: Logger;
  /** Origins allowed to call the codec endpoint from a browser: the Temporal UI's. */
  corsOrigins: string[];
  /** How callers authenticate (auth/config.ts); absent: API keys only. */
  auth?: OperatorAuthConfig;
  /** Called for every refused credential (a 401 from authentication): what a rate limit on failures counts. */
  onAuthFailure?: (failure: AuthFailure) => void;
  /** The VASPs' keys (keys), for importing keys; client/main.ts opens it. */
  keystore?: Keystore;
  /** The VASP group the system runs for. */
  group: GroupConfig;
  /** Outgoing transfers, the agent endpoints and the notification webhook (outgoing/); absent: they answer 500. */
  transfers?: TransferContext;
  /** Start outgoing transfers' workflows eagerly: a worker shares this process's connection (all-in-one mode). */
  eagerStart?: boolean;
  /** Incoming transfers' settings (deadlines, polling, screening threshold). */
  incoming: IncomingConfig;
  /** The signing secrets of the network's webhooks (notification and address webhooks). */
  webhooks: WebhookConfig;
  /** The console's link to the Temporal UI; defaults to the development UI. */
  console?: ConsoleSettings;
  /** Serve HTTPS with these (lib/api-transport.ts apiHttpsOptions); absent: plain HTTP, for loopback. */
  https?: HttpsOptions;
  /** Rate limits on webhooks, /healthz and refused credentials, per client IP (lib/api-transport.ts). */
  rateLimits: ApiTransportConfig['rateLimits'];
  /** Reverse proxies whose X-Forwarded-For names the client (TRUST_PROXY). */
  trustProxy?: string[];
  /**
   * A proxy in `trustProxy` terminates TLS (TLS_TERMINATED_BY_PROXY): answer only requests it forwards with
   * `X-Forwarded-Proto: https`, /healthz excepted (client/api/forwarded-https.ts).
   */
  requireForwardedHttps?: boolean;
  /**
   * Prices for thresholds (POST /v1/transfers and /validate; absent: the embedded table) and for simulating and
   * backtesting policies' amount rules (absent: amounts are unknown there).
   */
  pricing?: Pricing;
  /** Each subsidiary's jurisdiction (SUBSIDIARY_JURISDICTIONS); absent: FATF's rules apply to every subsidiary. */
  jurisdictions?: JurisdictionConfig;
  /** A span per request (client/api/tracing.ts), when the process traces (OTEL_EXPORTER_OTLP_ENDPOINT). */
  tracing?: boolean;
  /** Wallet ownership proofs' settings (WALLET_PROOF_*); absent: the defaults, and no small-deposit test. */
  walletProofs?: WalletProofConfig;
  /** Reported deposits' settings (DEPOSIT_*); absent: the defaults. */
  deposits?: DepositConfig;
}

/** Every webhook receiver: public (signed by the network), so limited per client IP before anything else runs. */
const WEBHOOK_PREFIX = '/webhooks/';
/** Public too, and each request asks Temporal and the database: limited per client IP (HEALTHZ_RATE_LIMIT). */
const HEALTHZ = '/healthz';

/**
 * The internal HTTP API. Route schemas are TypeBox JSON Schemas: fastify validates requests with them and
 * @fastify/swagger turns them into the OpenAPI document at /openapi.json (browsable at /docs). Every route declares
 * who may call it (client/api/auth/): roles, or public with the reason.
 */
export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 10 * 1024 * 1024,
    ajv: { customOptions: { allErrors: false, removeAdditional: false, coerceTypes: false } },
    ...(deps.https ? { https: deps.https } : {}),
    ...(deps.trustProxy ? { trustProxy: deps.trustProxy } : {}),
  }) as unknown as FastifyInstance;
  app.setErrorHandler(errorHandler);
  // Before any route, so that every handler runs in its request's span.
  if (deps.tracing) traceRequests(app);
  // Security headers on every answer, errors and 404s included. The console's page sets a policy of its own on top
  // (client/api/routes/console.ts: its import map's hash, the identity provider's origin).
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        frameAncestors: ["'none'"],
        // The API may run on plain HTTP on loopback, where upgrading the page's requests would break it.
        upgradeInsecureRequests: null,
      },
    },
    frameguard: { action: 'deny' },
  });
  if (deps.requireForwardedHttps) requireForwardedHttps(app);
  const limits = deps.rateLimits;
  const healthz = healthzRateLimit(limits);
  app.addHook('onRoute', (route) => {
    const limit = route.url.startsWith(WEBHOOK_PREFIX) ? limits.webhooks : route.url === HEALTHZ ? healthz : undefined;
    if (limit)
      route.config = {
        ...route.config,
        rateLimit: { max: limit.max, timeWindow: limit.windowMs },
      } as typeof route.config;
  });
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new TooManyRequestsError(
        `too many requests from this address; try again in ${Math.ceil(context.ttl / 1000)} s`,
        Math.ceil(context.ttl / 1000),
      ),
  });
  installAuth(app, {
    authenticator: createAuthenticator({ pool: deps.pool, config: deps.auth ?? {}, logger: deps.logger }),
    onAuthFailure: deps.onAuthFailure,
    failureLimit: new AuthFailureThrottle(limits.authFailures),
    publicPrefixes: { '/docs': "the API's documentation: describes the routes, holds no data" },
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'travel-rule-orchestrator internal API',
        version: '0.1.0',
        description: 'Orchestration of Travel Rule transfers for a gateway VASP and its subsidiaries.',
      },
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An access token of the configured identity provider (OPERATOR_AUTH_ISSUER), or an API key (tro_…)',
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(
    '/openapi.json',
    { config: { public: "the API's description, as /docs shows it" }, schema: { hide: true } },
    async () => app.swagger(),
  );

  healthRoutes(app, deps);
  codecRoutes(app, deps);
  checkRoutes(app, deps);
  transferRoutes(app, deps);
  agentRoutes(app, deps);
  notificationWebhookRoutes(app, deps);
  keyRoutes(app, deps);
  addressBookRoutes(app, deps);
  listRoutes(app, deps);
  kpiRoutes(app, deps);
  consoleRoutes(app, deps);
  apiKeyRoutes(app, deps);
  counterpartyRoutes(app, { ...deps, network: deps.transfers?.network });
  policyRoutes(app, { ...deps, ...policyFactSources(deps) });
  incomingRoutes(app, {
    temporal: deps.temporal,
    pool: deps.pool,
    incoming: deps.incoming,
    webhooks: deps.webhooks,
    subsidiaryDids: deps.group.subsidiaryDids,
  });
  walletProofRoutes(app, { ...deps, config: deps.walletProofs ?? loadWalletProofConfig({}) });
  depositRoutes(app, {
    ...deps,
    config: deps.deposits ?? loadDepositConfig({}),
    pricing: deps.pricing ?? createPricing(loadPricingConfig({})),
    jurisdictions: deps.jurisdictions ?? { subsidiaryCountries: {} },
  });
  return app;
}

/** What simulating and backtesting a policy learn facts from, as a worker's decision does: the directory, pricing. */
function policyFactSources(deps: ApiDeps) {
  const network = deps.transfers?.network;
  const directory = network
    ? createDecideDeps({ pool: deps.pool, network, gatewayDid: deps.group.gatewayDid ?? '' })
    : undefined;
  return {
    ...(directory ? { jurisdictionOf: directory.jurisdictionOf } : {}),
    ...(deps.pricing ? { toFiat: fiatOf(deps.pricing) } : {}),
  };
}
