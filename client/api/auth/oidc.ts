import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from '../../../auth/config';
import { AuthenticationError, UpstreamUnavailableError } from '../../../lib/errors';
import { isLoopbackHost } from '../../../lib/loopback';
import { ROLES, type Principal, type Role } from '../../../lib/principal';

/** Keys are refetched at most this often when a token names an unknown `kid` (a rotation at the provider). */
const JWKS_COOLDOWN_MS = 30_000;
/** Keys known for this long are refetched at the next token even without an unknown `kid`. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

type Fetch = typeof fetch;

/** The value at a dotted path of the claims (`realm_access.roles`); a claim whose name has a dot is found whole first. */
export function claimAt(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  let at: unknown = payload;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** This API's roles among the claim's values: an array, or a space-separated string as in `scope`. */
export function rolesFrom(value: unknown, prefix: string): Role[] {
  const values = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : [];
  const roles = values
    .filter((v): v is string => typeof v === 'string' && v.startsWith(prefix))
    .map((v) => v.slice(prefix.length))
    .filter((v): v is Role => (ROLES as readonly string[]).includes(v));
  return [...new Set(roles)];
}

/** Claims end up in the audit log and workflow history: printable text, bounded. */
const text = (v: unknown, max = 200): string | undefined =>
  typeof v === 'string' && v.trim() !== ''
    ? v
        .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
        .trim()
        .slice(0, max)
    : undefined;

function principalOf(payload: JWTPayload, kid: string | undefined, config: OidcConfig): Principal {
  const subject = text(payload.sub, 255)!;
  return {
    kind: 'oidc',
    subject,
    issuer: config.issuer,
    // For display: the audit log and decisions record the subject (lib/principal.ts auditActor).
    name: text(payload.name) ?? text(payload.preferred_username) ?? text(payload.email) ?? subject,
    roles: rolesFrom(claimAt(payload, config.rolesClaim), config.rolePrefix),
    credentialId: text(payload.jti, 255) ?? `kid:${kid ?? 'none'}`,
  };
}

/** Claims only ID tokens carry: OpenID Connect Core's nonce, at_hash and c_hash, and FAPI's s_hash. */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'];

/**
 * An access token, not an ID token or another JWT the provider signs with the same keys: an ID token says who signed
 * in to some client and may carry this API's id as its audience, but grants nothing. RFC 9068 types access tokens
 * `at+jwt` (`application/at+jwt`); with `requireAtJwt` nothing else is accepted. Without it (providers that do not
 * type them), a typ other than JWT is still refused, and so are the claims only ID tokens carry and Keycloak's
 * `typ: "ID"` claim.
 */
function assertAccessToken(typ: string | undefined, payload: JWTPayload, requireAtJwt: boolean): void {
  const type = typ?.toLowerCase().replace(/^application\//, '');
  const details = { credential: 'oidc', rule: 'an access token (typ at+jwt, RFC 9068)' };
  if (requireAtJwt && type !== 'at+jwt') {
    throw new AuthenticationError(
      `the token is not typed as an access token: its typ is ${typ === undefined ? 'missing' : JSON.stringify(typ)}, not at+jwt (RFC 9068; OPERATOR_AUTH_REQUIRE_AT_JWT=0 for a provider that does not type its access tokens)`,
      details,
    );
  }
  if (type !== undefined && type !== 'at+jwt' && type !== 'jwt')
    throw new AuthenticationError(`the token's typ ${JSON.stringify(typ)} is not an access token's`, details);
  const idClaim = ID_TOKEN_CLAIMS.find((c) => payload[c] !== undefined);
  if (idClaim !== undefined || payload.typ === 'ID') {
    throw new AuthenticationError(`an ID token is not an access token (it carries ${idClaim ?? 'typ "ID"'})`, details);
  }
}

/**
 * Verifies OIDC / OAuth 2 access tokens of one identity provider: the JWKS is found through the issuer's discovery
 * document and cached (refetched on an unknown `kid`, at most every 30 s); the signature, `iss`, `aud`, `exp` and
 * `nbf` (with the configured leeway), the algorithm (asymmetric ones only) and that it is an access token (typ at+jwt)
 * are checked. A provider that cannot be reached is a 503, not the caller's fault.
 */
export class OidcVerifier {
  private keys?: Promise<JWTVerifyGetKey>;

  private readonly fetchImpl: Fetch;
  private readonly cooldownMs: number;

  constructor(
    private readonly config: OidcConfig,
    opts: { fetch?: Fetch; jwksCooldownMs?: number } = {},
  ) {
    this.fetchImpl = opts.fetch ?? fetch;
    this.cooldownMs = opts.jwksCooldownMs ?? JWKS_COOLDOWN_MS;
  }

  async verify(token: string): Promise<Principal> {
    const keys = await this.jwks();
    try {
      const { payload, protectedHeader } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: this.config.algorithms,
        clockTolerance: this.config.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      });
      assertAccessToken(protectedHeader.typ, payload, this.config.requireAtJwt !== false);
      return principalOf(payload, protectedHeader.kid, this.config);
    } catch (e) {
      throw refusal(e);
    }
  }

  private jwks(): Promise<JWTVerifyGetKey> {
    this.keys ??= this.discover().catch((e: unknown) => {
      // Try the discovery document again at the next request rather than keep the failure.
      this.keys = undefined;
      throw e;
    });
    return this.keys;
  }

  private async discover(): Promise<JWTVerifyGetKey> {
    const url = `${this.config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const r = await this.fetchImpl(url, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      doc = (await r.json()) as typeof doc;
    } catch (e) {
      throw new UpstreamUnavailableError(
        `the identity provider's discovery document ${url} could not be read (${(e as Error).message})`,
        { setting: 'OPERATOR_AUTH_ISSUER' },
      );
    }
    if (doc.issuer !== this.config.issuer) {
      throw new UpstreamUnavailableError(
        `the discovery document at ${url} names issuer ${JSON.stringify(doc.issuer)}, not OPERATOR_AUTH_ISSUER`,
        { setting: 'OPERATOR_AUTH_ISSUER' },
      );
    }
    let jwksUri: URL;
    try {
      jwksUri = new URL(String(doc.jwks_uri));
    } catch {
      throw new UpstreamUnavailableError(`the discovery document at ${url} has no jwks_uri`, {
        setting: 'OPERATOR_AUTH_ISSUER',
      });
    }
    if (jwksUri.protocol !== 'https:' && !(jwksUri.protocol === 'http:' && isLoopbackHost(jwksUri.hostname))) {
      throw new UpstreamUnavailableError(`the identity provider's jwks_uri ${jwksUri.href} is not https`, {
        setting: 'OPERATOR_AUTH_ISSUER',
      });
    }
    return createRemoteJWKSet(jwksUri, {
      cooldownDuration: this.cooldownMs,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  }
}

/** A verification failure as the API's error: the token's fault is 401, the provider's (keys unreachable) 503. */
function refusal(e: unknown): Error {
  const details = { credential: 'oidc' };
  if (e instanceof joseErrors.JWTExpired) return new AuthenticationError('the token has expired', details);
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = e.claim;
    const what =
      claim === 'iss'
        ? 'the token is from another issuer'
        : claim === 'aud'
          ? 'the token is for another audience'
          : claim === 'nbf'
            ? 'the token is not valid yet'
            : `the token's ${claim} claim is ${e.reason === 'missing' ? 'missing' : 'not accepted'}`;
    return new AuthenticationError(what, details);
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed)
    return new AuthenticationError('the token is signed with an algorithm this API does not accept', details);
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return new AuthenticationError("the token's signature does not verify", details);
  if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new AuthenticationError('the token is signed with a key the identity provider does not publish', details);
  }
  if (
    e instanceof joseErrors.JWSInvalid ||
    e instanceof joseErrors.JWTInvalid ||
    e instanceof joseErrors.JOSENotSupported
  ) {
    return new AuthenticationError('the token is not a valid signed JWT', details);
  }
  if (e instanceof AuthenticationError || e instanceof UpstreamUnavailableError) return e;
  return new UpstreamUnavailableError(`the identity provider's keys could not be read (${(e as Error).message})`, {
    setting: 'OPERATOR_AUTH_ISSUER',
  });
}
