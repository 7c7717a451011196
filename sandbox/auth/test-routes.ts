/**
 * The sandbox's own test routes (`/sandbox/*`: simulated counterparties, simulated transfers, the outboxes, faults,
 * the quota) are not the network's and can act as other VASPs. They are registered only with SANDBOX_TEST_ROUTES=1
 * (so otherwise they answer 404, as on the real network) and answer only to the sandbox operator's token
 * (`Authorization: Bearer $SANDBOX_OPERATOR_TOKEN`, 401 otherwise).
 *
 * Both decisions are made on the route the router matched, never on the request's raw URL: the router decodes the
 * path (`/%73andbox/outbox` is `/sandbox/outbox` to it), so a test on the raw URL can be walked around.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { SandboxConfig } from '../config';
import { NetworkError, unauthorized } from '../errors';

export const TEST_ROUTE_PREFIX = '/sandbox/';
/** The operator token's least length: it guards routes that publish keys and send transfers as a VASP. */
export const MIN_OPERATOR_TOKEN_LENGTH = 24;

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether a registered route (its URL pattern, as the router holds it) is one of the test routes. */
export function isTestRoute(routeUrl: string): boolean {
  return routeUrl.startsWith(TEST_ROUTE_PREFIX) || routeUrl === '/sandbox';
}

/** Whether the test routes exist: each part registers its `/sandbox/*` routes only when this holds. */
export function testRoutesOn(config: Pick<SandboxConfig, 'testRoutes' | 'operatorToken'>): boolean {
  return config.testRoutes === true && Boolean(config.operatorToken);
}

/**
 * Must be added before any other hook and any route. With the test routes off, registering one fails the sandbox's
 * start (a part that forgot testRoutesOn); with them on, a request the router matched to one runs no other hook
 * unless it carries the operator token.
 */
export function testRouteGate(app: FastifyInstance, config: Pick<SandboxConfig, 'testRoutes' | 'operatorToken'>): void {
  const expected = testRoutesOn(config) ? digest(config.operatorToken!) : undefined;
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!expected && isTestRoute(route.url)) {
      throw new Error(
        `${String(route.method)} ${route.url} is a test route registered while SANDBOX_TEST_ROUTES is off: register it only when testRoutesOn(config)`,
      );
    }
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    // Undefined for a request no route matched: the not-found handler answers it.
    const route = request.routeOptions.url;
    if (route === undefined || !isTestRoute(route)) return;
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first differing character.
    if (!expected || !match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw unauthorized(
        'the sandbox test routes need the sandbox operator token (SANDBOX_OPERATOR_TOKEN) as a bearer token',
      );
    }
  });
}

/** 403 for a VASP the seed does not mark `simulated`: the test routes never act for a VASP that is not the sandbox's. */
export const notSimulated = (field: string, did: string) =>
  new NetworkError(
    403,
    'ForbiddenError',
    `${field}: ${did} is not a simulated VASP (the seed marks simulated VASPs with "simulated": true)`,
  );
