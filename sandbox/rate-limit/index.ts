import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../lib/errors';
import { durationSetting, type Env } from '../../lib/config-values';
import { Type } from 'typebox';
import { badRequest, NetworkError } from '../errors';
import { documented } from '../openapi';
import { checkSettings, NETWORK_RATE_LIMIT, type RateLimiter, type RateLimitSettings } from './limiter';

export { RateLimiter, NETWORK_RATE_LIMIT, type RateLimitSettings } from './limiter';

declare module '../config' {
  interface SandboxConfig {
    /** The network's rate limit per credential (sandbox/rate-limit/limiter.ts); absent: no limit. */
    rateLimit?: RateLimitSettings;
  }
}

/** The network's answer over the limit: 429 with the block's remaining seconds in Retry-After. */
export function tooManyRequests(retryAfterMs: number): NetworkError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new NetworkError(
    429,
    'TooManyRequestsError',
    `rate limit exceeded for this credential: every endpoint is blocked for ${seconds} s`,
    { 'retry-after': String(seconds) },
  );
}

/** A duration in the one syntax of lib/config-values.ts (`<n>ms|s|m|h|d`), `fallbackMs` when unset. */
const durationMs = (env: Env, name: string, fallbackMs: number): number =>
  durationSetting(env, name, `${fallbackMs}ms`).ms;

/**
 * SANDBOX_RATE_LIMIT (calls per window per credential, default the network's 6000; `off` for none),
 * SANDBOX_RATE_WINDOW (default 300s), SANDBOX_RATE_LOCKOUT (default 10s).
 */
export function rateLimitFromEnv(env: Env): RateLimitSettings | undefined {
  const raw = env.SANDBOX_RATE_LIMIT?.trim();
  if (raw === 'off') return undefined;
  const limit = raw ? Number(raw) : NETWORK_RATE_LIMIT.limit;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ConfigError(
      'SANDBOX_RATE_LIMIT',
      `"${raw}" is not a whole number above 0`,
      'Set it to the calls allowed per window per credential, or off',
    );
  }
  return checkSettings(
    {
      limit,
      windowMs: durationMs(env, 'SANDBOX_RATE_WINDOW', NETWORK_RATE_LIMIT.windowMs),
      lockoutMs: durationMs(env, 'SANDBOX_RATE_LOCKOUT', NETWORK_RATE_LIMIT.lockoutMs),
    },
    'SANDBOX_RATE',
  );
}

const view = (limiter: RateLimiter) => ({
  settings: limiter.settings
    ? {
        limit: limiter.settings.limit,
        windowSeconds: limiter.settings.windowMs / 1000,
        lockoutSeconds: limiter.settings.lockoutMs / 1000,
      }
    : null,
  credentials: limiter.stats(),
});

const seconds = (v: unknown, field: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 86_400)
    throw badRequest('ValidationError', `${field}: must be a number of seconds from 0 to 86400`);
  return Math.round(v * 1000);
};

/**
 * Not the network's: the test routes of the limit. `GET /sandbox/rate-limit` shows the settings and, per credential,
 * the calls in the window, the lockout in force and the 429s answered. `PUT /sandbox/rate-limit` changes the
 * settings at run time (`{limit, windowSeconds?, lockoutSeconds?}`, or `{limit: null}` for none; `reset: true`
 * forgets the counts); until the next start, which reads SANDBOX_RATE_* again.
 */
const Seconds = Type.Number({ minimum: 0, maximum: 86_400 });
const RateLimitBody = Type.Object(
  {
    limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()])),
    windowSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86_400 })),
    lockoutSeconds: Type.Optional(Seconds),
    reset: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function rateLimitRoutes(app: FastifyInstance, limiter: RateLimiter): void {
  app.get('/sandbox/rate-limit', async () => view(limiter));
  app.put('/sandbox/rate-limit', documented({ body: RateLimitBody }), async (request) => {
    const body = request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw badRequest('ValidationError', 'body: must be {limit, windowSeconds?, lockoutSeconds?, reset?}');
    const unknown = Object.keys(body).find((k) => !['limit', 'windowSeconds', 'lockoutSeconds', 'reset'].includes(k));
    if (unknown) throw badRequest('ValidationError', `${unknown}: is not a setting of the rate limit`);
    if (body.reset !== undefined && typeof body.reset !== 'boolean')
      throw badRequest('ValidationError', 'reset: must be a boolean');
    if (body.limit === null) {
      limiter.settings = undefined;
    } else if (body.limit !== undefined || body.windowSeconds !== undefined || body.lockoutSeconds !== undefined) {
      const current = limiter.settings ?? NETWORK_RATE_LIMIT;
      const limit = body.limit === undefined ? current.limit : body.limit;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1_000_000_000) {
        throw badRequest('ValidationError', 'limit: must be a whole number of calls above 0, or null for no limit');
      }
      const windowMs =
        body.windowSeconds === undefined ? current.windowMs : seconds(body.windowSeconds, 'windowSeconds');
      if (windowMs < 1) throw badRequest('ValidationError', 'windowSeconds: must be above 0');
      limiter.settings = {
        limit,
        windowMs,
        lockoutMs:
          body.lockoutSeconds === undefined ? current.lockoutMs : seconds(body.lockoutSeconds, 'lockoutSeconds'),
      };
    }
    if (body.reset) limiter.reset();
    request.log.info({ rateLimit: limiter.settings ?? null, reset: !!body.reset }, 'sandbox rate limit changed');
    return view(limiter);
  });
}
