import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import type { OutgoingStartDeps } from '../transfers/start-outgoing';
import type { HttpsOptions } from '../../lib/api-transport';
import type { HostAndPort } from '../../lib/host-header';
import type { Logger } from '../../lib/logger';
import { refuseForeignHostOrOrigin } from './agent-host-guard';
import { errorHandler } from './errors';
import { agentRoutes } from './routes/agent';

export interface AgentApiOptions {
  /** Serve HTTPS: required off loopback (auth/config.ts refuses to start there without it). */
  https?: HttpsOptions;
  /** Host names besides loopback's that callers may address the listener by (its own address, AGENT_PUBLIC_HOST). */
  hosts?: HostAndPort[];
}

/**
 * The network agent's contract as integrations expect it: `/didkey/new` and `/tx/*` without an Authorization header.
 * Only these routes, on a listener of their own that client/main.ts binds to loopback (AGENT_HOST, AGENT_PORT), so
 * only processes on this machine act through it, and only programs: requests addressed by another name or sent by a
 * web page are refused first (agent-host-guard.ts). No authentication is installed here: the roles the routes declare
 * apply on the main API.
 */
export async function buildAgentApi(
  deps: OutgoingStartDeps & { logger: Logger },
  opts: AgentApiOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 10 * 1024 * 1024,
    ajv: { customOptions: { allErrors: false, removeAdditional: false, coerceTypes: false } },
    ...(opts.https ? { https: opts.https } : {}),
  }) as unknown as FastifyInstance;
  app.setErrorHandler(errorHandler);
  // The same security headers as the main API (it serves JSON only, so helmet's defaults fit).
  await app.register(helmet);
  refuseForeignHostOrOrigin(app, { hosts: opts.hosts });
  agentRoutes(app, deps);
  return app;
}
