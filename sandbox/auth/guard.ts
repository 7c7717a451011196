import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { unauthorized } from '../errors';
import { Access } from './access';
import type { RateLimiter } from '../rate-limit/limiter';
import { tooManyRequests } from '../rate-limit';
import type { Principal, TokenService } from './tokens';

declare module 'fastify' {
  interface FastifyRequest {
    /** The network API client the bearer token was issued to (distinct from the orchestrator's operator principal). */
    networkCaller?: Principal;
    access?: Access;
  }
}

/**
 * A preHandler that admits only bearer tokens issued for `audience`, counts the call against the credential's rate
 * limit (a 429 over it), and loads the caller's access rights.
 */
export function bearerGuard(pool: Pool, tokens: TokenService, audience: string, limiter?: RateLimiter) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) throw unauthorized('No authorization token was found');
    const verified = await tokens.verify(match[1]!, audience);
    if ('refused' in verified) throw unauthorized(verified.refused);
    const admission = limiter?.admit(verified.clientId);
    if (admission && !admission.admitted) throw tooManyRequests(admission.retryAfterMs);
    request.networkCaller = verified;
    request.access = await Access.load(pool, verified.userDid);
  };
}

/** The caller's access rights; routes behind the guard may rely on them. */
export function accessOf(request: FastifyRequest): Access {
  if (!request.access) throw unauthorized();
  return request.access;
}
