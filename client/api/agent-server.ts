import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import type { OutgoingStartDeps } from '../../outgoing/start';
import type { Logger } from '../../lib/logger';
import { errorHandler } from './errors';
import { agentRoutes } from './routes/agent';

/**
 * The network agent's contract as integrations expect it: `/didkey/new` and `/tx/*` without an Authorization header.
 * Only these routes, on a listener of their own that client/main.ts binds to loopback (AGENT_HOST, AGENT_PORT), so
 * only processes on this machine act through it. No authentication is installed here: the roles the routes declare
 * apply on the main API.
 */
export async function buildAgentApi(deps: OutgoingStartDeps & { logger: Logger }): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 10 * 1024 * 1024,
    ajv: { customOptions: { allErrors: false, removeAdditional: false, coerceTypes: false } },
  });
  app.setErrorHandler(errorHandler);
  // The same security headers as the main API (it serves JSON only, so helmet's defaults fit).
  await app.register(helmet);
  agentRoutes(app, deps);
  return app;
}
