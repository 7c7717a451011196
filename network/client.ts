import { AsyncLocalStorage } from 'node:async_hooks';
import { trace, type Attributes } from '@opentelemetry/api';
import ky, { HTTPError, type KyInstance, type Options } from 'ky';
import type { NetworkConfig } from './config';
import {
  AuthenticationError,
  ForbiddenError,
  InFlightError,
  isAppError,
  NotFoundError,
  RateLimitedError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type AppError,
} from '../lib/errors';
import type { CallPriority, RateBudget } from './rate-budget';
import { retryTransient, type TransientRetryPolicy } from './retry';
import { metrics, routeLabel } from '../lib/metrics/registry';

interface CachedToken {
  value: string;
  expiresAt: number;
}

/** Renew a token this long before it expires, so a request never leaves with a token that dies in flight. */
const TOKEN_MARGIN_MS = 5 * 60_000;

/** The network's block after a 429 when its answer names none (every endpoint for 10 s). */
export const DEFAULT_LOCKOUT_MS = 10_000;

/**
 * A call to the network is an event `network <route>` on the span it is made in (the activity's `RunActivity` span, the
 * API request's span), not a span of its own: the call is in the trace with its route template, priority, duration and
 * failure, at a fraction of a span's CPU (no ids, no context switch, no separate export). Not tracing, or outside any
 * recording span (a trace not sampled), it costs a lookup.
 */
function recordCall(
  span: ReturnType<typeof trace.getActiveSpan>,
  name: string,
  startedAt: number,
  attributes: Attributes,
): void {
  span?.addEvent(name, { ...attributes, 'network.duration_ms': Date.now() - startedAt }, startedAt);
}

/** The priority of the `call` a request is made in; the request hooks read it. */
const callPriority = new AsyncLocalStorage<CallPriority>();

export interface NetworkClientOptions {
  /** The group's shared budget (network/rate-budget.ts); without one, calls leave unthrottled. */
  budget?: RateBudget;
  now?: () => number;
}

/**
 * The network's HTTP API as the orchestrator uses it: client-credentials tokens per audience (API and personal-data
 * service), cached until shortly before they expire and renewed once on a 401. ky never retries; every failure becomes
 * one of the project's typed errors, keeping the network's error name and message. Retries are Temporal's job, except
 * in a view made with `retrying`: there an idempotent call rides out transient failures itself (network/retry.ts).
 *
 * Every request to the API and the personal-data service takes a call from the group's budget first (in the request
 * hook, so nothing made through `api` or `pii` bypasses it), at the priority of the view it is made through (`at`);
 * a 429 blocks every process for the network's Retry-After and fails as a retryable RateLimitedError.
 */
export class NetworkClient {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<string>>();
  readonly api: KyInstance;
  readonly pii: KyInstance;
  readonly budget?: RateBudget;
  /** The priority of calls made through this client; `at` makes a view with another. */
  readonly priority: CallPriority = 'high';
  /** Set on views made with `retrying`: how idempotent calls ride out transient failures. */
  readonly transientRetry?: TransientRetryPolicy;
  private readonly now: () => number;

  constructor(
    readonly config: NetworkConfig,
    options: NetworkClientOptions = {},
  ) {
    this.budget = options.budget;
    this.now = options.now ?? Date.now;
    this.api = this.authenticated(config.baseUrl, config.audience);
    this.pii = this.authenticated(config.baseUrlPii, config.audiencePii, { headers: { 'X-Notabene-SDK': 'pii-sdk' } });
  }

  /**
   * The same client (tokens, budget, request hooks) whose calls take from the budget at `priority`: low-priority callers
   * (address book, polls, sweeps) wait at the reserve so that answering and creating transfers never do.
   */
  at(priority: CallPriority): NetworkClient {
    if (priority === this.priority) return this;
    const view = Object.create(this) as NetworkClient;
    Object.defineProperty(view, 'priority', { value: priority });
    return view;
  }

  /**
   * The same client whose idempotent calls retry transient failures (5xx, timeouts, 429s) with backoff for up to
   * `policy.maxElapsedMs`, each try taking from the budget like any call. For long steps of many calls, where ending
   * the activity at the first failure would throw away its progress.
   */
  retrying(policy: TransientRetryPolicy): NetworkClient {
    const view = Object.create(this) as NetworkClient;
    Object.defineProperty(view, 'transientRetry', { value: policy });
    return view;
  }

  private async takeBudget(request: Request): Promise<void> {
    await this.budget?.take(callPriority.getStore() ?? 'high', `${request.method} ${new URL(request.url).pathname}`);
  }

  /** A 429: every process of the group waits out the network's block (Retry-After, else the network's 10 s). */
  private async noteRateLimited(response: Response): Promise<void> {
    if (response.status !== 429) return;
    metrics.rateLimited.inc();
    await this.budget?.lockedOut(retryAfterMs(response, this.budget.config.lockoutMs, this.now()));
  }

  private authenticated(prefixUrl: string, audience: string, extra: Options = {}): KyInstance {
    return ky.create({
      prefixUrl,
      retry: 0,
      timeout: 30_000,
      ...extra,
      hooks: {
        beforeRequest: [
          async (request) => {
            request.headers.set('Authorization', `Bearer ${await this.token(audience)}`);
            // After the token, so that the time between the take and the network's count stays short.
            await this.takeBudget(request);
          },
        ],
        afterResponse: [
          async (request, options, response) => {
            await this.noteRateLimited(response);
            // A token revoked or signed with a rotated key: fetch a fresh one and try exactly once more.
            if (response.status !== 401 || request.headers.get('x-token-renewed')) return response;
            this.tokens.delete(audience);
            const retry = new Request(request, { headers: new Headers(request.headers) });
            retry.headers.set('Authorization', `Bearer ${await this.token(audience)}`);
            retry.headers.set('x-token-renewed', '1');
            await this.takeBudget(retry);
            const again = await ky(retry, { ...options, retry: 0, hooks: {}, throwHttpErrors: false });
            await this.noteRateLimited(again);
            return again;
          },
        ],
      },
    });
  }

  /** A valid access token for the audience; concurrent callers share one token request. */
  async token(audience: string): Promise<string> {
    const cached = this.tokens.get(audience);
    if (cached && cached.expiresAt - TOKEN_MARGIN_MS > this.now()) return cached.value;
    let inflight = this.pending.get(audience);
    if (!inflight) {
      inflight = this.fetchToken(audience).finally(() => this.pending.delete(audience));
      this.pending.set(audience, inflight);
    }
    return inflight;
  }

  private fetchToken(audience: string): Promise<string> {
    const span = trace.getActiveSpan();
    if (!span?.isRecording()) return this.requestToken(audience);
    const startedAt = Date.now();
    const attributes = { 'http.request.method': 'POST', 'url.template': '/oauth/token' };
    return this.requestToken(audience).then(
      (token) => {
        recordCall(span, 'network POST /oauth/token', startedAt, attributes);
        return token;
      },
      (e: unknown) => {
        recordCall(span, 'network POST /oauth/token', startedAt, { ...attributes, 'error.type': errorName(e) });
        throw e;
      },
    );
  }

  private async requestToken(audience: string): Promise<string> {
    try {
      const body = await ky
        .post(`${this.config.authUrl}/oauth/token`, {
          json: {
            client_id: this.config.clientId,
            client_secret: this.config.clientSecret,
            grant_type: 'client_credentials',
            audience,
          },
          retry: 0,
          timeout: 30_000,
        })
        .json<{ access_token: string; expires_in: number }>();
      this.tokens.set(audience, { value: body.access_token, expiresAt: this.now() + body.expires_in * 1000 });
      return body.access_token;
    } catch (e) {
      throw await toNetworkError(e, `token request for audience ${audience}`);
    }
  }

  /**
   * Runs a request at this client's priority and maps any failure onto the project's errors. An `idempotent` request
   * (the same effect however often it arrives) is tried again on transient failures in a `retrying` view.
   */
  call<T>(what: string, request: () => Promise<T>, options: { idempotent?: boolean } = {}): Promise<T> {
    const route = routeLabel(what);
    const once = () =>
      callPriority.run(this.priority, async () => {
        // An event per try on the span the call is made in, named by the route template (never the URL: its ids and
        // query may be a customer's).
        const active = trace.getActiveSpan();
        const span = active?.isRecording() ? active : undefined;
        const startedAt = span ? Date.now() : 0;
        const end = metrics.networkCallSeconds.startTimer({ route });
        try {
          const result = await request();
          metrics.networkCalls.inc({ route, status: 'ok' });
          if (span) recordCall(span, `network ${route}`, startedAt, this.callAttributes(route));
          return result;
        } catch (e) {
          const error = await toNetworkError(e, what, this.budget?.config.lockoutMs);
          const status = (error.details as { networkStatus?: number } | undefined)?.networkStatus;
          metrics.networkCalls.inc({ route, status: status ? String(status) : 'error' });
          if (span)
            recordCall(span, `network ${route}`, startedAt, {
              ...this.callAttributes(route),
              ...(status && { 'http.response.status_code': status }),
              'error.type': error.name,
            });
          throw error;
        } finally {
          end();
        }
      });
    return options.idempotent && this.transientRetry ? retryTransient(what, once, this.transientRetry) : once();
  }

  private callAttributes(route: string): Attributes {
    const space = route.indexOf(' ');
    return {
      'http.request.method': route.slice(0, space),
      'url.template': route.slice(space + 1),
      'network.priority': this.priority,
    };
  }
}

/** A failure's type for a span event: the project's error class name, else the thrown value's name. */
function errorName(e: unknown): string {
  return isAppError(e) ? e.name : e instanceof Error ? e.name : 'Error';
}

/** The network's error body: `{err:{name, code, message}}`, sometimes `{err: "text"}`, `{message}` or Auth0's form. */
async function describe(response: Response): Promise<{ name?: string; message: string }> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const err = body.err as Record<string, unknown> | string | undefined;
    if (typeof err === 'string') return { message: err };
    if (err && typeof err === 'object')
      return { name: err.name as string | undefined, message: String(err.message ?? '') };
    if (typeof body.error === 'string')
      return { name: body.error, message: String(body.error_description ?? body.error) };
    if (typeof body.message === 'string') return { message: body.message };
  } catch {
    /* not JSON */
  }
  return { message: text.slice(0, 200) || response.statusText };
}

/** The block a 429 announces: Retry-After in seconds or as an HTTP date, else `fallbackMs`. */
export function retryAfterMs(response: Response, fallbackMs: number, now = Date.now()): number {
  const raw = response.headers.get('retry-after')?.trim();
  if (raw && /^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = raw ? Date.parse(raw) : NaN;
  return Number.isNaN(at) ? fallbackMs : Math.max(0, at - now);
}

export async function toNetworkError(e: unknown, what: string, lockoutMs = DEFAULT_LOCKOUT_MS): Promise<AppError> {
  // The budget's own refusal (a RateLimitedError from the request hook) is already typed.
  if (isAppError(e)) return e;
  if (e instanceof HTTPError) {
    const status = e.response.status;
    const { name, message } = await describe(e.response);
    const text = `${what}: network answered ${status}${name ? ` ${name}` : ''}: ${message}`;
    const details = { networkStatus: status, networkError: name, networkMessage: message };
    if (status === 401) return new AuthenticationError(text, details);
    if (status === 403) return new ForbiddenError(text, details);
    if (status === 404) return new NotFoundError(text, details);
    if (status === 409) return new InFlightError(text, details);
    if (status === 429)
      return new RateLimitedError(text, { ...details, retryAfterMs: retryAfterMs(e.response, lockoutMs) });
    if (status === 408 || status === 429 || status >= 500) return new UpstreamUnavailableError(text, details);
    return new UpstreamRejectedError(text, details);
  }
  const cause = e as Error & { cause?: { code?: string } };
  return new UpstreamUnavailableError(
    `${what}: network unreachable (${cause.cause?.code ?? cause.name}: ${cause.message})`,
  );
}
