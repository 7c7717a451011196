/**
 * The sandbox's own test routes (`/sandbox/*`: simulated counterparties, simulated transfers, the outboxes, faults,
 * the quota) are not the network's and can act as other VASPs. They exist only with SANDBOX_TEST_ROUTES=1 (404
 * otherwise, as on the real network) and answer only to the sandbox operator's token
 * (`Authorization: Bearer $SANDBOX_OPERATOR_TOKEN`, 401 otherwise).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NetworkError, notFound, unauthorized } from '../errors';

export const TEST_ROUTE_PREFIX = '/sandbox/';
/** The operator token's least length: it guards routes that publish keys and send transfers as a VASP. */
export const MIN_OPERATOR_TOKEN_LENGTH = 24;

const digest = (s: string) => createHash('sha256').update(s).digest();

export function isTestRoute(url: string): boolean {
  return url.startsWith(TEST_ROUTE_PREFIX) || url === '/sandbox';
}

/** Registers the gate on every request; must be added before any other hook so nothing else runs for a refused one. */
export function testRouteGate(app: FastifyInstance, opts: { enabled: boolean; operatorToken?: string }): void {
  const expected = opts.operatorToken ? digest(opts.operatorToken) : undefined;
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!isTestRoute(request.url)) return;
    if (!opts.enabled || !expected) throw notFound(`${request.method} ${request.url.split('?')[0]} not found`);
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first differing character.
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw unauthorized('the sandbox test routes need the sandbox operator token (SANDBOX_OPERATOR_TOKEN) as a bearer token');
    }
  });
}

/** 403 for a VASP the seed does not mark `simulated`: the test routes never act for a VASP that is not the sandbox's. */
export const notSimulated = (field: string, did: string) =>
  new NetworkError(403, 'ForbiddenError', `${field}: ${did} is not a simulated VASP (the seed marks simulated VASPs with "simulated": true)`);
