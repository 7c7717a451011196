/**
 * Network faults, switchable at run time, for reliability runs (`npm run chaos`) and their tests. Off by default;
 * the routes refuse with 403 unless the sandbox runs with `SANDBOX_FAULTS=1`, so a sandbox in a shared environment
 * cannot be made to misbehave by whoever reaches it.
 *
 * | method | path | body | answer |
 * |---|---|---|---|
 * | PUT | `/sandbox/faults` | a FaultConfig (below); `{}` turns every fault off | `{config, injected}` |
 * | GET | `/sandbox/faults` | | `{enabled, config, injected}`: `injected` counts each kind since the last PUT |
 *
 * FaultConfig (every part optional, shares are 0–1, drawn per request or delivery):
 * - `errors: {share, status?, routes?: {<route>: share}}`: answer `status` (503 unless given, 500–599) before the
 *   handler runs; `routes` overrides the share per route, keyed `<METHOD> <path as registered>` or `<path>`
 *   (e.g. `"POST /tx/create"`, `"/pii/put"`).
 * - `rateLimit: {share, retryAfterSeconds?}`: 429 with `Retry-After` (10 s by default, the network's block), before the handler.
 * - `latency: {share, ms, afterHandler?, routes?}`: the request waits `ms` before it is handled, or with
 *   `afterHandler: true` its answer waits `ms` after the handler committed (the change is visible, and its webhooks
 *   go out, before the caller hears back).
 * - `dropAfterCommit: {share, methods?, routes?}`: the handler runs (and commits) and then the connection is destroyed
 *   instead of answered, so the caller cannot know whether it happened; `methods` limits it (default: POST, PUT,
 *   PATCH, DELETE).
 * `routes` (a list, keyed like `errors.routes`) limits a fault to those routes.
 * - `webhooks: {duplicate?, reorder?, late?: {share, ms}, reorderMaxMs?}`: a delivered notification is sent a second
 *   time (same `webhook-id`, as at-least-once delivery does); a share is held back a random 0–`reorderMaxMs`
 *   (3 s) so later ones overtake it; a share is held back `ms`.
 * - `keyRotation: {share}`: after a directory lookup of a simulated counterparty's `pii_didkey` is answered, the
 *   counterparty rotates it (a new did:key published); it keeps its earlier keys for what was encrypted to them.
 *
 * Never faulted: `/healthz`, `/sandbox/*` and `/oidc/*` (the orchestrator's operators' identity provider, not the network).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { NetworkError, badRequest } from '../errors';
import { documented } from '../openapi';
import { isObject } from '../../lib/is-object';

export interface FaultConfig {
  errors?: { share: number; status?: number; routes?: Record<string, number> };
  rateLimit?: { share: number; retryAfterSeconds?: number };
  latency?: { share: number; ms: number; afterHandler?: boolean; routes?: string[] };
  dropAfterCommit?: { share: number; methods?: string[]; routes?: string[] };
  webhooks?: { duplicate?: number; reorder?: number; reorderMaxMs?: number; late?: { share: number; ms: number } };
  keyRotation?: { share: number };
}

export const FAULT_KINDS = [
  'errors',
  'rateLimit',
  'latency',
  'dropAfterCommit',
  'webhookDuplicate',
  'webhookReorder',
  'webhookLate',
  'keyRotation',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const invalid = (message: string) => badRequest('ValidationError', message);

// The PUT body as documented (parseFaultConfig checks it, naming the field); null means the default where there is one.
const Share = Type.Number({ minimum: 0, maximum: 1 });
const Ms = Type.Integer({ minimum: 0, maximum: 600_000 });
const Routes = Type.Array(Type.String({ minLength: 1, maxLength: 200 }));
const OrDefault = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const closed = { additionalProperties: false } as const;
const FaultBody = Type.Object(
  {
    errors: Type.Optional(
      Type.Object(
        {
          share: OrDefault(Share),
          status: OrDefault(Type.Integer({ minimum: 500, maximum: 599 })),
          routes: Type.Optional(Type.Record(Type.String(), Share)),
        },
        closed,
      ),
    ),
    rateLimit: Type.Optional(
      Type.Object({ share: Share, retryAfterSeconds: OrDefault(Type.Integer({ minimum: 0, maximum: 3600 })) }, closed),
    ),
    latency: Type.Optional(
      Type.Object(
        {
          share: Share,
          ms: Type.Integer({ minimum: 0, maximum: 120_000 }),
          afterHandler: Type.Optional(Type.Boolean()),
          routes: Type.Optional(Routes),
        },
        closed,
      ),
    ),
    dropAfterCommit: Type.Optional(
      Type.Object(
        {
          share: Share,
          methods: OrDefault(Type.Array(Type.String({ pattern: '^[A-Z]{3,7}$' }))),
          routes: Type.Optional(Routes),
        },
        closed,
      ),
    ),
    webhooks: Type.Optional(
      Type.Object(
        {
          duplicate: OrDefault(Share),
          reorder: OrDefault(Share),
          reorderMaxMs: OrDefault(Ms),
          late: Type.Optional(Type.Object({ share: Share, ms: Ms }, closed)),
        },
        closed,
      ),
    ),
    keyRotation: Type.Optional(Type.Object({ share: Share }, closed)),
  },
  closed,
);

function share(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
    throw invalid(`${field}: must be a share from 0 to 1`);
  return v;
}
function ms(v: unknown, field: string, max = 600_000): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)
    throw invalid(`${field}: must be whole milliseconds from 0 to ${max}`);
  return v;
}
function only(v: Record<string, unknown>, field: string, keys: string[]): void {
  const extra = Object.keys(v).find((k) => !keys.includes(k));
  if (extra) throw invalid(`${field}.${extra}: unknown (one of ${keys.join(', ')})`);
}
function routeList(v: unknown, field: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((r) => typeof r !== 'string' || r.length === 0 || r.length > 200))
    throw invalid(`${field}: must be a list of routes`);
  return v as string[];
}
function part(body: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (!isObject(v)) throw invalid(`${key}: must be an object`);
  return v;
}

/** Checks a PUT body; throws a 400 naming the field. */
export function parseFaultConfig(body: unknown): FaultConfig {
  if (!isObject(body)) throw invalid('body: must be an object');
  only(body, 'body', ['errors', 'rateLimit', 'latency', 'dropAfterCommit', 'webhooks', 'keyRotation']);
  const config: FaultConfig = {};
  const errors = part(body, 'errors');
  if (errors) {
    only(errors, 'errors', ['share', 'status', 'routes']);
    const status = errors.status ?? 503;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 500 || status > 599)
      throw invalid('errors.status: must be a 5xx status');
    const routes: Record<string, number> = {};
    if (errors.routes !== undefined) {
      if (!isObject(errors.routes)) throw invalid('errors.routes: must be an object {<route>: share}');
      for (const [route, s] of Object.entries(errors.routes)) routes[route] = share(s, `errors.routes.${route}`);
    }
    config.errors = { share: share(errors.share ?? 0, 'errors.share'), status, routes };
  }
  const rate = part(body, 'rateLimit');
  if (rate) {
    only(rate, 'rateLimit', ['share', 'retryAfterSeconds']);
    const after = rate.retryAfterSeconds ?? 10;
    if (typeof after !== 'number' || !Number.isInteger(after) || after < 0 || after > 3600)
      throw invalid('rateLimit.retryAfterSeconds: must be whole seconds from 0 to 3600');
    config.rateLimit = { share: share(rate.share, 'rateLimit.share'), retryAfterSeconds: after };
  }
  const latency = part(body, 'latency');
  if (latency) {
    only(latency, 'latency', ['share', 'ms', 'afterHandler', 'routes']);
    if (latency.afterHandler !== undefined && typeof latency.afterHandler !== 'boolean')
      throw invalid('latency.afterHandler: must be a boolean');
    config.latency = {
      share: share(latency.share, 'latency.share'),
      ms: ms(latency.ms, 'latency.ms', 120_000),
      afterHandler: latency.afterHandler === true,
      routes: routeList(latency.routes, 'latency.routes'),
    };
  }
  const drop = part(body, 'dropAfterCommit');
  if (drop) {
    only(drop, 'dropAfterCommit', ['share', 'methods', 'routes']);
    const methods = drop.methods ?? ['POST', 'PUT', 'PATCH', 'DELETE'];
    if (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !/^[A-Z]{3,7}$/.test(m)))
      throw invalid('dropAfterCommit.methods: must be a list of HTTP methods');
    config.dropAfterCommit = {
      share: share(drop.share, 'dropAfterCommit.share'),
      methods: methods as string[],
      routes: routeList(drop.routes, 'dropAfterCommit.routes'),
    };
  }
  const hooks = part(body, 'webhooks');
  if (hooks) {
    only(hooks, 'webhooks', ['duplicate', 'reorder', 'reorderMaxMs', 'late']);
    let late: { share: number; ms: number } | undefined;
    if (hooks.late !== undefined) {
      if (!isObject(hooks.late)) throw invalid('webhooks.late: must be {share, ms}');
      only(hooks.late, 'webhooks.late', ['share', 'ms']);
      late = { share: share(hooks.late.share, 'webhooks.late.share'), ms: ms(hooks.late.ms, 'webhooks.late.ms') };
    }
    config.webhooks = {
      duplicate: share(hooks.duplicate ?? 0, 'webhooks.duplicate'),
      reorder: share(hooks.reorder ?? 0, 'webhooks.reorder'),
      reorderMaxMs: ms(hooks.reorderMaxMs ?? 3000, 'webhooks.reorderMaxMs'),
      ...(late && { late }),
    };
  }
  const rotation = part(body, 'keyRotation');
  if (rotation) {
    only(rotation, 'keyRotation', ['share']);
    config.keyRotation = { share: share(rotation.share, 'keyRotation.share') };
  }
  return config;
}

/** Routes never faulted, by the route the router matched (it decodes the path, so the raw URL cannot tell). */
const EXEMPT = /^\/(healthz|sandbox|oidc)(\/|$)/;
const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));

/** The sandbox's current faults (one per process: a restarted sandbox starts without any). */
export class Faults {
  private config: FaultConfig = {};
  private counts = new Map<FaultKind, number>();

  constructor(
    readonly enabled: boolean,
    private readonly random: () => number = Math.random,
  ) {}

  set(config: FaultConfig): void {
    this.config = config;
    this.counts.clear();
  }

  view() {
    return {
      enabled: this.enabled,
      config: this.config,
      injected: Object.fromEntries(FAULT_KINDS.map((k) => [k, this.counts.get(k) ?? 0])),
    };
  }

  private hit(kind: FaultKind, p: number | undefined): boolean {
    if (!p || this.random() >= p) return false;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    return true;
  }

  /** Before the handler: latency, then 429 or 5xx (answered here, so the handler never runs). */
  async beforeHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const matched = request.routeOptions.url;
    if (matched !== undefined && EXEMPT.test(matched)) return;
    const { latency, rateLimit, errors, dropAfterCommit } = this.config;
    const path = request.url.split('?')[0]!;
    const route = matched ?? path;
    const on = (routes: string[] | undefined) =>
      !routes || routes.some((r) => r === `${request.method} ${route}` || r === route || r === path);
    if (latency && on(latency.routes) && this.hit('latency', latency.share)) {
      if (latency.afterHandler) delayed.set(request, latency.ms);
      else await sleep(latency.ms);
    }
    if (rateLimit && this.hit('rateLimit', rateLimit.share)) {
      const e = new NetworkError(429, 'TooManyRequestsError', 'rate limit exceeded (sandbox fault)');
      void reply
        .code(429)
        .header('retry-after', String(rateLimit.retryAfterSeconds ?? 10))
        .send(e.toBody());
      return;
    }
    if (errors) {
      const p =
        errors.routes?.[`${request.method} ${route}`] ??
        errors.routes?.[route] ??
        errors.routes?.[path] ??
        errors.share;
      if (this.hit('errors', p)) {
        const status = errors.status ?? 503;
        void reply
          .code(status)
          .send(new NetworkError(status, 'ServiceUnavailableError', 'service unavailable (sandbox fault)').toBody());
        return;
      }
    }
    if (
      dropAfterCommit &&
      (dropAfterCommit.methods ?? []).includes(request.method) &&
      on(dropAfterCommit.routes) &&
      this.hit('dropAfterCommit', dropAfterCommit.share)
    ) {
      dropped.add(request);
    }
  }

  /** After the handler: an answer held back (latency afterHandler), or the connection destroyed (dropAfterCommit). */
  async onSend(request: FastifyRequest): Promise<void> {
    const wait = delayed.get(request);
    if (wait !== undefined) {
      delayed.delete(request);
      await sleep(wait);
    }
    if (!dropped.delete(request)) return;
    request.raw.socket?.destroy();
  }

  /** Whether to send a delivered webhook once more. */
  duplicateWebhook(): boolean {
    return this.hit('webhookDuplicate', this.config.webhooks?.duplicate);
  }

  /** How long to hold back a webhook delivery before its first attempt (0: send now). */
  webhookDelayMs(): number {
    const w = this.config.webhooks;
    if (!w) return 0;
    if (w.late && this.hit('webhookLate', w.late.share)) return w.late.ms;
    if (this.hit('webhookReorder', w.reorder)) return Math.round(this.random() * (w.reorderMaxMs ?? 3000));
    return 0;
  }

  keyRotationOn(): boolean {
    return (this.config.keyRotation?.share ?? 0) > 0;
  }

  /** Whether a simulated counterparty rotates its key after this lookup was answered. */
  rotateKey(): boolean {
    return this.hit('keyRotation', this.config.keyRotation?.share);
  }
}

const dropped = new WeakSet<FastifyRequest>();
const delayed = new WeakMap<FastifyRequest, number>();

/** The hooks on every route, and the `/sandbox/faults` window when the test routes are on (sandbox/auth/test-routes.ts). */
export function faultRoutes(app: FastifyInstance, faults: Faults, opts: { testRoutes: boolean }): void {
  app.addHook('onRequest', async (request, reply) => {
    await faults.beforeHandler(request, reply);
    if (reply.sent) return reply;
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    await faults.onSend(request);
    return payload;
  });
  if (!opts.testRoutes) return;
  const refuse = () =>
    new NetworkError(403, 'ForbiddenError', 'fault injection is off: start the sandbox with SANDBOX_FAULTS=1');
  app.put('/sandbox/faults', documented({ body: FaultBody }), async (request) => {
    if (!faults.enabled) throw refuse();
    faults.set(parseFaultConfig(request.body ?? {}));
    return faults.view();
  });
  app.get('/sandbox/faults', async () => faults.view());
}
