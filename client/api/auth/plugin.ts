import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AuthenticationError, ForbiddenError, TooManyRequestsError } from '../../../lib/errors';
import type { Principal, Role } from '../../../lib/principal';
import type { Authenticator } from './authenticator';
import type { Throttled } from './failure-throttle';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The roles of which the caller needs one (client/api/auth/roles.ts). */
    roles?: readonly Role[];
    /** Why this route takes no credentials: it is signed otherwise (webhooks), or serves no data (health, static files). */
    public?: string;
  }
  interface FastifyRequest {
    /** Who sent the request; set on every route that declares roles. */
    principal?: Principal;
  }
  interface FastifyInstance {
    /** Every route of the API with what it requires, as registered: the role matrix test reads it. */
    routeAccess: RouteAccess[];
  }
}

export interface RouteAccess {
  method: string;
  url: string;
  roles?: readonly Role[];
  public?: string;
}

/** One refused credential (401): what a rate limit on failed authentications counts. */
export interface AuthFailure {
  request: FastifyRequest;
  reason: string;
}

export interface AuthOptions {
  authenticator: Authenticator;
  /** Called on every 401 this plugin answers, before the answer is sent. */
  onAuthFailure?: (failure: AuthFailure) => void;
  /**
   * Refused credentials counted per client address (client/api/auth/failure-throttle.ts). Asked only after a presented
   * credential was refused: a credential that verifies is always served, whoever else failed from its address.
   */
  failureLimit?: AuthFailureLimit;
  /** Routes that plugins register (API docs): public by path prefix, with the reason. */
  publicPrefixes?: Record<string, string>;
}

export interface AuthFailureLimit {
  /** Counts one refusal from the address: undefined, answer the 401 at once; else hold it `delayMs` and answer 429. */
  refused(address: string): Throttled | undefined;
}

export const BEARER_SCHEME = 'bearerAuth';
const REALM = 'travel-rule-orchestrator';

/** The caller of a route that declares roles. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AuthenticationError('credentials are required');
  return request.principal;
}

function asArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * Authentication and roles for every route, declared with the route: `config: { roles: [...] }` (the caller needs
 * one of them) or `config: { public: 'why' }`. A route that declares neither does not register, so nothing is served
 * open by omission. Must be installed before any route. The OpenAPI document shows the bearer scheme on protected
 * routes and the roles in their description.
 */
export function installAuth(app: FastifyInstance, opts: AuthOptions): void {
  const table: RouteAccess[] = [];
  app.decorate('routeAccess', table);

  const authenticate = async (request: FastifyRequest, reply: FastifyReply, roles: readonly Role[]) => {
    let principal: Principal;
    try {
      principal = await opts.authenticator.authenticate(request.headers.authorization);
    } catch (e) {
      if (e instanceof AuthenticationError) {
        const presented = request.headers.authorization !== undefined;
        request.log.info({ reason: e.message, url: request.routeOptions.url }, 'authentication refused');
        opts.onAuthFailure?.({ request, reason: e.message });
        // Only a credential that was presented counts: a call without one (the development Temporal UI's codec
        // requests) guesses nothing.
        const throttled = presented ? opts.failureLimit?.refused(request.ip) : undefined;
        if (throttled) {
          await sleep(throttled.delayMs);
          reply.header('retry-after', String(throttled.retryAfterSeconds));
          throw new TooManyRequestsError(
            `the credential was refused, and so were too many others from this address: refusals are answered slowly for ${throttled.retryAfterSeconds} s`,
            throttled.retryAfterSeconds,
          );
        }
        reply.header(
          'www-authenticate',
          presented ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`,
        );
        throw e;
      }
      throw e;
    }
    request.principal = principal;
    if (!roles.some((r) => principal.roles.includes(r))) {
      reply.header('www-authenticate', `Bearer realm="${REALM}", error="insufficient_scope"`);
      throw new ForbiddenError(
        `this needs the role ${roles.join(' or ')}; ${principal.name} has ${principal.roles.length ? principal.roles.join(', ') : 'no role of this API'}`,
        { rule: `one of the roles ${roles.join(', ')}`, required: [...roles] },
      );
    }
  };

  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = asArray(route.method).map(String);
    const config = (route.config ?? {}) as { roles?: readonly Role[]; public?: string };
    const prefix = Object.keys(opts.publicPrefixes ?? {}).find((p) => route.url === p || route.url.startsWith(`${p}/`));
    const isPreflight = methods.every((m) => m === 'OPTIONS');
    const publicReason =
      config.public ??
      (prefix
        ? opts.publicPrefixes![prefix]
        : isPreflight
          ? 'CORS preflight (browsers send no credentials)'
          : undefined);
    if (config.roles && publicReason)
      throw new Error(`route ${methods.join(',')} ${route.url} declares both roles and public`);
    if (!config.roles && !publicReason) {
      throw new Error(
        `route ${methods.join(',')} ${route.url} declares no access: add config.roles (client/api/auth/roles.ts) or config.public with the reason`,
      );
    }
    for (const method of methods)
      table.push({ method, url: route.url, ...(config.roles ? { roles: config.roles } : { public: publicReason }) });

    const schema = (route.schema ?? {}) as Record<string, unknown>;
    if (publicReason) {
      route.schema = { ...schema, security: [] };
      return;
    }
    const roles = config.roles!;
    const description = typeof schema.description === 'string' ? `${schema.description}\n\n` : '';
    route.schema = {
      ...schema,
      security: [{ [BEARER_SCHEME]: [] }],
      description: `${description}Roles: ${roles.join(', ')}.`,
    };
    // First of the route's own hooks, so nothing (body parsing included) runs for an unauthenticated caller.
    route.onRequest = [
      async (request: FastifyRequest, reply: FastifyReply) => authenticate(request, reply, roles),
      ...asArray(route.onRequest),
    ] as RouteOptions['onRequest'];
  });
}
