import { randomUUID, timingSafeEqual } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { Pool } from 'pg';
import { sha256 } from '../seed';
import { operatorClientIdsFor, readOperatorClient, serviceSecret } from './store';

/** Operator tokens live 24 hours: long enough for a demo session, as development credentials. */
export const OPERATOR_TOKEN_TTL_SECONDS = 86_400;
/** The audience given when a token request names none: the orchestrator's default OPERATOR_AUTH_AUDIENCE. */
export const DEFAULT_OPERATOR_AUDIENCE = 'travel-rule-orchestrator';
const ALG = 'ES256';

export interface OperatorClient {
  clientId: string;
  subject: string;
  name: string;
  email: string | null;
  roles: string[];
}

/**
 * An OpenID Connect issuer for the orchestrator's operators, standing in for the company's identity provider
 * (Keycloak, Okta, Entra ID, Auth0): an ES256 key pair generated once and kept in the sandbox schema, published as a
 * JWKS that the discovery document names, and access tokens for seeded clients (client credentials). The
 * orchestrator verifies these exactly as it verifies a real provider's.
 */
export class OperatorIssuer {
  private constructor(
    readonly issuer: string,
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK & { kid: string },
  ) {}

  static async open(pool: Pool, issuer: string): Promise<OperatorIssuer> {
    const { privateKey } = await generateKeyPair(ALG, { extractable: true });
    const fresh = Buffer.from(JSON.stringify(await exportJWK(privateKey)));
    const jwk = JSON.parse((await serviceSecret(pool, 'operator-signing-key', fresh)).toString('utf8')) as JWK;
    const { d: _private, ...publicPart } = jwk;
    const kid = await calculateJwkThumbprint(publicPart);
    return new OperatorIssuer(issuer, (await importJWK(jwk, ALG)) as CryptoKey, {
      ...publicPart,
      kid,
      alg: ALG,
      use: 'sig',
    });
  }

  discovery() {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.issuer}/jwks`,
      token_endpoint: `${this.issuer}/token`,
      authorization_endpoint: `${this.issuer}/authorize`,
      grant_types_supported: ['client_credentials', 'authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      id_token_signing_alg_values_supported: [ALG],
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'name', 'email', 'roles'],
    };
  }

  jwks() {
    return { keys: [this.publicJwk] };
  }

  /** An access token for an operator: its subject, name and roles, for `audience`, obtained by `authorizedParty`. */
  issue(client: OperatorClient, audience: string, authorizedParty = client.clientId): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return this.sign({
      iss: this.issuer,
      sub: client.subject,
      aud: audience,
      iat: now,
      nbf: now,
      exp: now + OPERATOR_TOKEN_TTL_SECONDS,
      jti: randomUUID(),
      azp: authorizedParty,
      name: client.name,
      ...(client.email ? { email: client.email } : {}),
      roles: client.roles,
    });
  }

  /**
   * Signs exactly these claims with the issuer's key, typed `at+jwt` as RFC 9068 types access tokens unless `typ` says
   * otherwise (tests make expired, misdirected or ID tokens with it).
   */
  sign(claims: JWTPayload, typ = 'at+jwt'): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: ALG, typ, kid: this.publicJwk.kid }).sign(this.privateKey);
  }
}

/**
 * An operator signing in on the provider's page: the client's id or email as the name and its secret as the password,
 * checked in constant time; undefined when either is wrong.
 */
export async function authenticateOperator(
  pool: Pool,
  username: string,
  password: string,
): Promise<OperatorClient | undefined> {
  const ids = await operatorClientIdsFor(pool, username);
  for (const id of ids.length ? ids : ['']) {
    const found = await authenticateOperatorClient(pool, id, password);
    if (found) return found;
  }
  return undefined;
}

/** Looks a client up and checks its secret in constant time; undefined when either is wrong. */
export async function authenticateOperatorClient(
  pool: Pool,
  clientId: string,
  clientSecret: string,
): Promise<OperatorClient | undefined> {
  const row = await readOperatorClient(pool, clientId);
  const presented = sha256(clientSecret);
  const ok = timingSafeEqual(presented, row?.secret_sha256 ?? Buffer.alloc(presented.length));
  return ok && row
    ? { clientId: row.client_id, subject: row.subject, name: row.name, email: row.email, roles: row.roles }
    : undefined;
}
