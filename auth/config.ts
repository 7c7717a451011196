import { ConfigError } from '../lib/errors';
import type { ApiTransportConfig } from '../lib/api-transport';
import { parseHost } from '../lib/host-header';
import { isLoopbackHost } from '../lib/loopback';

/**
 * How operators and services authenticate to the internal API (environment variables in parentheses). API keys need
 * no setting (they live in the database, `npm run cli -- api-keys`); OIDC is on when an issuer is set.
 */
export interface OperatorAuthConfig {
  oidc?: OidcConfig;
  /** The credential the CLI sends to the API (API_TOKEN, or the commands' --token-file): an access token or an API key. */
  apiToken?: string;
  /** API_TOKEN_FILE: a file holding that credential, read when API_TOKEN is unset. */
  apiTokenFile?: string;
}

export interface OidcConfig {
  /** The identity provider's issuer (OPERATOR_AUTH_ISSUER), exactly as tokens carry it in `iss`; its discovery document names the JWKS. */
  issuer: string;
  /** The `aud` tokens must carry (OPERATOR_AUTH_AUDIENCE): the API's identifier at the provider. */
  audience: string;
  /** Dotted path of the claim holding the roles (OPERATOR_AUTH_ROLES_CLAIM, default `roles`), e.g. `realm_access.roles`. */
  rolesClaim: string;
  /** Prefix the provider puts before this API's role names (OPERATOR_AUTH_ROLE_PREFIX, e.g. `tro-` for `tro-admin`). */
  rolePrefix: string;
  /** Signature algorithms accepted (OPERATOR_AUTH_ALGORITHMS): asymmetric only. */
  algorithms: string[];
  /** Leeway on `exp` and `nbf` (OPERATOR_AUTH_CLOCK_SKEW, seconds, default 30). */
  clockToleranceSeconds: number;
  /**
   * Tokens must be typed `at+jwt` in their header, as RFC 9068 access tokens are (OPERATOR_AUTH_REQUIRE_AT_JWT, on
   * unless `0`; absent here: on). Providers that do not type their access tokens (Keycloak, Entra ID, Okta) need `0`;
   * an ID token is refused either way.
   */
  requireAtJwt?: boolean;
  /**
   * The console's client id at the provider (OPERATOR_CONSOLE_CLIENT_ID): a public client of the authorization code
   * flow with PKCE whose redirect URI is the console's address. Unset: the console accepts pasted tokens only.
   */
  consoleClientId?: string;
}

/**
 * The agent-compatible endpoints without Authorization, on a listener of their own (AGENT_PORT unset: none). It
 * answers only requests addressed to it by name (client/api/agent-host-guard.ts): loopback's, its own address, and
 * AGENT_PUBLIC_HOST.
 */
export interface AgentListenerConfig {
  /** AGENT_PORT. */
  port?: number;
  /** AGENT_HOST, default 127.0.0.1; anything else needs AGENT_ALLOW_REMOTE=1 and TLS. */
  host: string;
  /** AGENT_ALLOW_REMOTE=1: the operator accepts that anyone who reaches the address acts without a credential. */
  allowRemote: boolean;
  /** Off loopback only: the API's TLS_CERT_FILE and TLS_KEY_FILE, with which the listener serves HTTPS. */
  tls?: { certFile: string; keyFile: string };
  /** AGENT_PUBLIC_HOST: `name[:port]`, the name callers address the listener by off loopback (a `Host` it accepts). */
  publicHost?: string;
}

type Env = Record<string, string | undefined>;

/**
 * Public-key algorithms only: an HMAC algorithm would let anyone holding the provider's public key (published in the
 * JWKS) forge tokens if a key were ever used as an HMAC secret, and `none` is no signature at all.
 */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const MAX_CLOCK_SKEW_SECONDS = 300;

function issuerUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(
      'OPERATOR_AUTH_ISSUER',
      `"${raw}" is not a URL`,
      "Set it to the identity provider's issuer, e.g. https://login.example.com/realms/bank",
    );
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) {
    throw new ConfigError(
      'OPERATOR_AUTH_ISSUER',
      `"${raw}" is not an https URL`,
      "Use the provider's https issuer (plain http is accepted on loopback only)",
    );
  }
  // Kept as given: it is compared with `iss` exactly, and some providers' issuers end with a slash (Auth0's).
  return raw;
}

export function loadOperatorAuthConfig(env: Env): OperatorAuthConfig {
  const apiToken = env.API_TOKEN?.trim() || undefined;
  const apiTokenFile = env.API_TOKEN_FILE?.trim() || undefined;
  return { ...(apiToken ? { apiToken } : {}), ...(apiTokenFile ? { apiTokenFile } : {}), ...loadOidcConfig(env) };
}

function loadOidcConfig(env: Env): { oidc?: OidcConfig } {
  const issuer = env.OPERATOR_AUTH_ISSUER?.trim();
  const audience = env.OPERATOR_AUTH_AUDIENCE?.trim();
  if (!issuer && !audience) return {};
  if (!issuer)
    throw new ConfigError(
      'OPERATOR_AUTH_ISSUER',
      'is unset while OPERATOR_AUTH_AUDIENCE is set',
      'Set both to accept tokens from an identity provider, or neither to use API keys only',
    );
  if (!audience)
    throw new ConfigError(
      'OPERATOR_AUTH_AUDIENCE',
      'is unset while OPERATOR_AUTH_ISSUER is set',
      'Set it to the audience (API identifier) the provider puts in tokens for this API',
    );

  const algorithms = (env.OPERATOR_AUTH_ALGORITHMS || DEFAULT_ALGORITHMS.join(','))
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const bad = algorithms.find((a) => !ASYMMETRIC_ALGORITHMS.includes(a));
  if (bad !== undefined || algorithms.length === 0) {
    throw new ConfigError(
      'OPERATOR_AUTH_ALGORITHMS',
      `"${bad ?? ''}" is not an accepted signature algorithm`,
      `List asymmetric algorithms only, from ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
    );
  }
  const rolesClaim = (env.OPERATOR_AUTH_ROLES_CLAIM || 'roles').trim();
  if (!/^[A-Za-z0-9_:\-/]+(\.[A-Za-z0-9_:\-/]+)*$/.test(rolesClaim)) {
    throw new ConfigError(
      'OPERATOR_AUTH_ROLES_CLAIM',
      `"${rolesClaim}" is not a claim name or dotted path`,
      'Use e.g. roles or realm_access.roles',
    );
  }
  const skewRaw = (env.OPERATOR_AUTH_CLOCK_SKEW ?? '').trim();
  const skew = skewRaw === '' ? 30 : /^\d+$/.test(skewRaw) ? Number(skewRaw) : NaN;
  if (!(skew >= 0 && skew <= MAX_CLOCK_SKEW_SECONDS)) {
    throw new ConfigError(
      'OPERATOR_AUTH_CLOCK_SKEW',
      `"${skewRaw}" is not a number of seconds from 0 to ${MAX_CLOCK_SKEW_SECONDS}`,
      'Set a small leeway such as 30, or unset it',
    );
  }
  const atJwt = (env.OPERATOR_AUTH_REQUIRE_AT_JWT ?? '').trim().toLowerCase();
  if (!['', '0', '1', 'true', 'false'].includes(atJwt)) {
    throw new ConfigError(
      'OPERATOR_AUTH_REQUIRE_AT_JWT',
      `"${atJwt}" is neither 1 nor 0`,
      'Leave it unset (access tokens must be typed at+jwt, RFC 9068), or set 0 for a provider that does not type them',
    );
  }
  const consoleClientId = env.OPERATOR_CONSOLE_CLIENT_ID?.trim();
  if (consoleClientId !== undefined && consoleClientId !== '' && !/^[\x21-\x7e]{1,256}$/.test(consoleClientId)) {
    throw new ConfigError(
      'OPERATOR_CONSOLE_CLIENT_ID',
      'is not a client id (1 to 256 printable characters, no spaces)',
      "Set it to the console's client id at the provider, or unset it",
    );
  }
  return {
    oidc: {
      issuer: issuerUrl(issuer),
      audience,
      rolesClaim,
      rolePrefix: env.OPERATOR_AUTH_ROLE_PREFIX?.trim() ?? '',
      algorithms,
      clockToleranceSeconds: skew,
      requireAtJwt: atJwt !== '0' && atJwt !== 'false',
      ...(consoleClientId ? { consoleClientId } : {}),
    },
  };
}

export function loadAgentListenerConfig(
  env: Env,
  apiPort: number,
  transport: Pick<ApiTransportConfig, 'tls'> = {},
): AgentListenerConfig {
  const host = (env.AGENT_HOST || '127.0.0.1').trim();
  const allowRemote = env.AGENT_ALLOW_REMOTE === '1' || env.AGENT_ALLOW_REMOTE === 'true';
  const publicHost = env.AGENT_PUBLIC_HOST?.trim() || undefined;
  if (publicHost !== undefined && !parseHost(publicHost)) {
    throw new ConfigError(
      'AGENT_PUBLIC_HOST',
      `"${publicHost}" is not a host name with an optional port`,
      'Set it to the name callers use for the agent listener, e.g. agent.bank.example or agent.bank.example:8443, or unset it',
    );
  }
  const raw = (env.AGENT_PORT ?? '').trim();
  if (raw === '') return { host, allowRemote };
  const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ConfigError(
      'AGENT_PORT',
      `"${raw}" is not a TCP port`,
      'Set AGENT_PORT to a whole number from 1 to 65535, or unset it for no agent listener',
    );
  if (port === apiPort)
    throw new ConfigError('AGENT_PORT', `is the API's port ${apiPort}`, 'The agent listener needs a port of its own');
  if (!isLoopbackHost(host) && !allowRemote) {
    throw new ConfigError(
      'AGENT_HOST',
      `"${host}" is not a loopback address, and the agent endpoints answer without credentials`,
      'Bind it to 127.0.0.1 (the default), or set AGENT_ALLOW_REMOTE=1 if whoever can reach that address may send transfers and read personal data',
    );
  }
  // Transfers and decrypted personal data, without a credential, must not cross a network in clear.
  if (!isLoopbackHost(host) && !transport.tls) {
    throw new ConfigError(
      'AGENT_HOST',
      `"${host}" is not a loopback address, and TLS_CERT_FILE and TLS_KEY_FILE are unset: the agent endpoints would answer in clear`,
      'Set TLS_CERT_FILE and TLS_KEY_FILE (PEM; the agent listener then serves HTTPS with them, and AGENT_PUBLIC_HOST names the host its callers use), or bind it to 127.0.0.1',
    );
  }
  return {
    port,
    host,
    allowRemote,
    ...(transport.tls && !isLoopbackHost(host) ? { tls: transport.tls } : {}),
    ...(publicHost ? { publicHost } : {}),
  };
}
