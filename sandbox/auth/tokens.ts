import { randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Pool } from 'pg';
import { sha256 } from '../seed';
import { readApiClient, serviceSecret } from './store';

/** Access tokens live 24 hours, as the network's Auth0 tokens do. */
export const TOKEN_TTL_SECONDS = 86_400;

export interface Principal {
  userDid: string;
  clientId: string;
  audience: string;
}

/** Signs and checks the sandbox's access tokens with an HS256 key generated once and kept in its own schema. */
export class TokenService {
  private constructor(
    private readonly key: Uint8Array,
    private readonly issuer: string,
  ) {}

  static async open(pool: Pool, issuer: string): Promise<TokenService> {
    return new TokenService(new Uint8Array(await serviceSecret(pool, 'token-signing-key', randomBytes(32))), issuer);
  }

  async issue(p: Principal): Promise<string> {
    return new SignJWT({ azp: p.clientId, gty: 'client-credentials' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(p.userDid)
      .setAudience(p.audience)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .sign(this.key);
  }

  /** Returns the principal, or a reason the token is refused (expired, forged, other audience). */
  async verify(token: string, audience: string): Promise<Principal | { refused: string }> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: this.issuer, audience, algorithms: ['HS256'] });
      return { userDid: String(payload.sub), clientId: String(payload.azp), audience };
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return { refused: 'token expired' };
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'aud')
        return { refused: 'token is for another audience' };
      return { refused: 'invalid token' };
    }
  }
}

/** Looks up a client by id and checks its secret in constant time. */
export async function authenticateClient(
  pool: Pool,
  clientId: string,
  clientSecret: string,
): Promise<string | undefined> {
  const row = await readApiClient(pool, clientId);
  const presented = sha256(clientSecret);
  // Compare even when the client is unknown, so timing does not reveal which client ids exist.
  const expected = row?.secret_sha256 ?? Buffer.alloc(presented.length);
  const ok = timingSafeEqual(presented, expected);
  return ok && row ? row.user_did : undefined;
}
