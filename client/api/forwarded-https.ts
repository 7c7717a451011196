import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../lib/errors';

/** Routes answered whatever the protocol: the health probe, which orchestrators call on the pod directly (fixed words only). */
const DIRECT = new Set(['/healthz']);

/**
 * Behind a proxy that terminates TLS (TLS_TERMINATED_BY_PROXY) the API itself speaks plain HTTP, so a request came over
 * HTTPS only if that proxy says so: `X-Forwarded-Proto: https` from an address in TRUST_PROXY (fastify's
 * `request.protocol` believes the header from those only). Anything else (plain http at the proxy, or a caller that
 * reached the API around it) is refused in the API's error shape before authentication or any route runs. Registered
 * after helmet, so the refusal carries the security headers too.
 */
export function requireForwardedHttps(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.protocol === 'https' || DIRECT.has(request.routeOptions.url ?? '')) return;
    throw new ValidationError(
      'X-Forwarded-Proto',
      'must be https, as set by the proxy in front of this API: it answers only requests that reached that proxy over HTTPS; call its https:// address',
    );
  });
}
