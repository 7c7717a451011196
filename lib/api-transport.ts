import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConfigError } from './errors';
import { isLoopbackHost } from './loopback';

/** A count of requests per client IP within a fixed window. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/**
 * How the internal API meets its callers: HTTPS off loopback, and the rate limits on what answers without credentials
 * (environment variables in parentheses).
 */
export interface ApiTransportConfig {
  /** TLS_CERT_FILE and TLS_KEY_FILE (PEM): the API serves HTTPS with them, TLS 1.2 at least. */
  tls?: { certFile: string; keyFile: string };
  /**
   * TRUST_PROXY: addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client; without it the rate
   * limits count the proxy as one client.
   */
  trustProxy?: string[];
  /**
   * TLS_TERMINATED_BY_PROXY=1 (only with TRUST_PROXY): a reverse proxy in front (an ingress, a load balancer) ends the
   * clients' TLS and forwards plain HTTP. The API may then listen without TLS files off loopback, and answers only
   * requests that proxy marks `X-Forwarded-Proto: https`, /healthz excepted (client/api/forwarded-https.ts).
   */
  tlsTerminatedByProxy?: true;
  rateLimits: {
    /** WEBHOOK_RATE_LIMIT: deliveries per client IP to each webhook receiver (unauthenticated, signed). */
    webhooks: RateLimit;
    /**
     * AUTH_FAILURE_RATE_LIMIT: refused credentials per client IP answered at once; past it, until the window ends, each
     * further refusal is held (0.5 s, doubling, at most 10 s) and answered 429. Valid credentials are always served.
     */
    authFailures: RateLimit;
    /**
     * HEALTHZ_RATE_LIMIT: requests per client IP to /healthz, which answers anyone and asks Temporal and the database
     * each time. Absent: the default.
     */
    healthz?: RateLimit;
  };
}

type Env = Record<string, string | undefined>;

export const DEFAULT_WEBHOOK_RATE_LIMIT = '6000/1m';
export const DEFAULT_AUTH_FAILURE_RATE_LIMIT = '20/5m';
/** Above a probe every second or two and a start-up's poll every 250 ms, far below a flood. */
export const DEFAULT_HEALTHZ_RATE_LIMIT = '300/1m';

/** The rate limit of /healthz when the configuration gives none (a caller that builds the API itself). */
export function healthzRateLimit(limits: ApiTransportConfig['rateLimits']): RateLimit {
  return limits.healthz ?? rateLimit({}, 'HEALTHZ_RATE_LIMIT', DEFAULT_HEALTHZ_RATE_LIMIT);
}
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** `<max>/<window>`, e.g. `600/1m`: at most `max` per window of `<n>s|m|h`. */
function rateLimit(env: Env, name: string, fallback: string): RateLimit {
  const raw = (env[name] || fallback).trim();
  const m = /^(\d{1,7})\/(\d{1,6})([smh])$/.exec(raw);
  const max = m ? Number(m[1]) : NaN;
  const windowMs = m ? Number(m[2]) * UNITS[m[3]!]! : NaN;
  if (!(max >= 1 && windowMs >= 1000 && windowMs <= 86_400_000)) {
    throw new ConfigError(
      name,
      `"${raw}" is not a rate limit`,
      `Write it as <count>/<window>, e.g. ${fallback} (window in s, m or h, at most 24h)`,
    );
  }
  return { max, windowMs };
}

export function loadApiTransportConfig(env: Env): ApiTransportConfig {
  const certFile = env.TLS_CERT_FILE?.trim() || undefined;
  const keyFile = env.TLS_KEY_FILE?.trim() || undefined;
  if (certFile && !keyFile)
    throw new ConfigError(
      'TLS_KEY_FILE',
      'is unset while TLS_CERT_FILE is set',
      'Set both (the certificate chain and its private key, PEM) for HTTPS, or neither on loopback',
    );
  if (keyFile && !certFile)
    throw new ConfigError(
      'TLS_CERT_FILE',
      'is unset while TLS_KEY_FILE is set',
      'Set both (the certificate chain and its private key, PEM) for HTTPS, or neither on loopback',
    );
  const trustProxy = (env.TRUST_PROXY ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const badProxy = trustProxy.find((p) => {
    const [ip, bits, ...rest] = p.split('/');
    const family = isIP(ip ?? '');
    return (
      family === 0 ||
      rest.length > 0 ||
      (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)))
    );
  });
  if (badProxy !== undefined)
    throw new ConfigError(
      'TRUST_PROXY',
      `"${badProxy}" is not an IP address or CIDR`,
      'List the reverse proxies in front of the API, e.g. 10.0.0.5,10.1.0.0/16',
    );
  const terminated = (env.TLS_TERMINATED_BY_PROXY ?? '').trim().toLowerCase();
  if (!['', '0', 'false', '1', 'true'].includes(terminated)) {
    throw new ConfigError(
      'TLS_TERMINATED_BY_PROXY',
      `"${terminated}" is neither 1 nor 0`,
      'Set it to 1 when a proxy in TRUST_PROXY terminates TLS in front of the API, or leave it unset',
    );
  }
  const tlsTerminatedByProxy = terminated === '1' || terminated === 'true';
  // Only the proxies in TRUST_PROXY are believed about X-Forwarded-Proto: without them no request could prove it came
  // over HTTPS (or, were every address trusted, any caller could claim it did).
  if (tlsTerminatedByProxy && !trustProxy.length) {
    throw new ConfigError(
      'TLS_TERMINATED_BY_PROXY',
      'is set without TRUST_PROXY',
      'Set TRUST_PROXY to the addresses or CIDRs of the proxy that terminates TLS (its X-Forwarded-Proto is then believed), or unset TLS_TERMINATED_BY_PROXY and give the API TLS_CERT_FILE and TLS_KEY_FILE',
    );
  }
  return {
    ...(certFile && keyFile ? { tls: { certFile, keyFile } } : {}),
    ...(trustProxy.length ? { trustProxy } : {}),
    ...(tlsTerminatedByProxy ? { tlsTerminatedByProxy: true as const } : {}),
    rateLimits: {
      webhooks: rateLimit(env, 'WEBHOOK_RATE_LIMIT', DEFAULT_WEBHOOK_RATE_LIMIT),
      authFailures: rateLimit(env, 'AUTH_FAILURE_RATE_LIMIT', DEFAULT_AUTH_FAILURE_RATE_LIMIT),
      healthz: rateLimit(env, 'HEALTHZ_RATE_LIMIT', DEFAULT_HEALTHZ_RATE_LIMIT),
    },
  };
}

/** What Fastify's `https` option takes. */
export interface HttpsOptions {
  cert: Buffer;
  key: Buffer;
  minVersion: 'TLSv1.2';
}

function readPem(name: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new ConfigError(
      name,
      `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      `Point ${name} at a readable PEM file`,
    );
  }
}

/**
 * The API's TLS for the address it listens on: HTTPS whenever TLS_CERT_FILE and TLS_KEY_FILE are set; without them
 * only on loopback, since bearer tokens, API keys and decrypted personal data would otherwise cross a network in clear,
 * or behind a proxy that terminates TLS (TLS_TERMINATED_BY_PROXY), which must then say each request came over HTTPS.
 */
export function apiHttpsOptions(host: string, transport: ApiTransportConfig): HttpsOptions | undefined {
  if (!transport.tls) {
    if (isLoopbackHost(host) || transport.tlsTerminatedByProxy) return undefined;
    throw new ConfigError(
      'TLS_CERT_FILE',
      `and TLS_KEY_FILE are unset while the API listens on ${host}, which is not a loopback address`,
      'Set TLS_CERT_FILE and TLS_KEY_FILE (PEM) so the API serves HTTPS there, set TLS_TERMINATED_BY_PROXY=1 and TRUST_PROXY when a proxy in front of it terminates TLS, or set HOST=127.0.0.1',
    );
  }
  return {
    cert: readPem('TLS_CERT_FILE', transport.tls.certFile),
    key: readPem('TLS_KEY_FILE', transport.tls.keyFile),
    minVersion: 'TLSv1.2',
  };
}
