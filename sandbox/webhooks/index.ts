/**
 * Notification webhooks:
 *
 * | method | path | body / query | answer |
 * |---|---|---|---|
 * | POST | `/webhook` | `{vaspDID, url, rotateSecret?}` | `{vaspDID, url, secret}`; registering again replaces the URL and keeps the secret unless `rotateSecret: true` |
 * | GET | `/webhook?vaspDID=` | | `{vaspDID, url}`, or 404 when none is set |
 * | DELETE | `/webhook` | `{vaspDID}` | `{isDeleted, message}` |
 *
 * Bearer-guarded; the caller must act for vaspDID (a gateway's users act for its subsidiaries). Deliveries: see
 * outbox.ts (what and to whom), dispatcher.ts (retries) and lib/webhook-signature.ts (signature). Sandbox-only window,
 * behind the test-route gate (sandbox/auth/test-routes.ts): `GET /sandbox/webhooks/deliveries?vaspDID=&transactionId=` → `{deliveries: [{messageId, vaspDID,
 * event, transactionId, state, attempts, lastStatus, lastError, createdAt, finishedAt}]}`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Did, documented, Uuid } from '../openapi';
import { generateWebhookSecret } from '../../lib/webhook-signature';
import type { Access } from '../auth/access';
import { accessOf } from '../auth/guard';
import { testRoutesOn } from '../auth/test-routes';
import type { SandboxContext } from '../context';
import { badRequest, forbidden, notFound } from '../errors';
import { transactionService } from '../transactions';
import { isUuid } from '../transactions/model';
import { DEFAULT_DISPATCHER_OPTIONS, WebhookDispatcher, type DispatcherOptions } from './dispatcher';
import { enqueueTransactionUpdated } from './outbox';
import { deleteWebhook, readDeliveries, upsertWebhook, webhookUrl } from './store';

export { envelope, webhookTransaction, TRANSACTION_UPDATED, ENVELOPE_VERSION } from './outbox';
export { WebhookDispatcher, DEFAULT_DISPATCHER_OPTIONS, type DispatcherOptions } from './dispatcher';

const DID = /^did:[a-zA-Z0-9]*:.+$/;
const invalid = (message: string) => badRequest('ValidationError', message);

const RegisterBody = Type.Object({
  vaspDID: Did,
  url: Type.String({ format: 'uri', maxLength: 2048 }),
  rotateSecret: Type.Optional(Type.Boolean()),
});
const VaspQuery = Type.Object({ vaspDID: Did });
const DeliveriesQuery = Type.Object({ vaspDID: Type.Optional(Type.String()), transactionId: Type.Optional(Uuid) });

function requireActFor(access: Access, vaspDid: unknown): string {
  if (typeof vaspDid !== 'string' || !DID.test(vaspDid)) throw invalid('vaspDID: must be a DID');
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} cannot act for VASP ${vaspDid}`);
  return vaspDid;
}

function parseUrl(url: unknown): string {
  if (typeof url !== 'string' || url.length > 2048) throw invalid('url: must be an http(s) URL');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('scheme');
    if (parsed.username || parsed.password) throw new Error('credentials');
    return parsed.toString();
  } catch {
    throw invalid('url: must be an http(s) URL without credentials');
  }
}

const objectBody = (body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};

/** Bearer-guarded routes; also subscribes the outbox to transaction changes. Register inside the API plugin. */
export function webhookRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  transactionService(ctx).onChange(enqueueTransactionUpdated);

  api.post('/webhook', documented({ body: RegisterBody }), async (request) => {
    const body = objectBody(request.body);
    const vaspDID = requireActFor(accessOf(request), body.vaspDID);
    const url = parseUrl(body.url);
    if (body.rotateSecret !== undefined && typeof body.rotateSecret !== 'boolean')
      throw invalid('rotateSecret: must be a boolean');
    const rotate = body.rotateSecret === true;
    const saved = await upsertWebhook(ctx.pool, vaspDID, url, generateWebhookSecret(), rotate);
    return { vaspDID, url: saved.url, secret: saved.secret };
  });

  api.get('/webhook', documented({ querystring: VaspQuery }), async (request) => {
    const vaspDID = requireActFor(accessOf(request), (request.query as Record<string, unknown>).vaspDID);
    const url = await webhookUrl(ctx.pool, vaspDID);
    if (url === undefined) throw notFound(`No webhook is set for VASP ${vaspDID}`);
    return { vaspDID, url };
  });

  api.delete(
    '/webhook',
    documented({
      body: Type.Object({ vaspDID: Type.Optional(Did) }),
      querystring: Type.Object({ vaspDID: Type.Optional(Did) }),
      description: 'vaspDID in the body or the query',
    }),
    async (request) => {
      const body = objectBody(request.body);
      const vaspDID = requireActFor(
        accessOf(request),
        body.vaspDID ?? (request.query as Record<string, unknown>).vaspDID,
      );
      return (await deleteWebhook(ctx.pool, vaspDID))
        ? { isDeleted: true, message: 'Webhook deleted' }
        : { isDeleted: false, message: 'No webhook was set' };
    },
  );
}

/** The delivery loop (started and stopped with the server) and the sandbox's window onto the outbox. */
export async function webhookPublicRoutes(
  app: FastifyInstance,
  ctx: SandboxContext,
  opts: Partial<DispatcherOptions> = {},
): Promise<void> {
  const dispatcher = new WebhookDispatcher(
    ctx.pool,
    ctx.logger,
    { ...DEFAULT_DISPATCHER_OPTIONS, ...opts },
    ctx.faults,
  );
  await app.register(async (scope) => {
    scope.addHook('onReady', async () => dispatcher.start());
    scope.addHook('onClose', async () => dispatcher.stop());
    if (!testRoutesOn(ctx.config)) return;
    scope.get('/sandbox/webhooks/deliveries', documented({ querystring: DeliveriesQuery }), async (request) => {
      const q = request.query as Record<string, unknown>;
      for (const name of ['vaspDID', 'transactionId'])
        if (Array.isArray(q[name])) throw invalid(`${name}: must be given once`);
      const vasp = typeof q.vaspDID === 'string' && q.vaspDID ? q.vaspDID : undefined;
      const tx = typeof q.transactionId === 'string' && q.transactionId ? q.transactionId : undefined;
      if (tx !== undefined && !isUuid(tx)) throw invalid('transactionId: must be a UUID');
      return { deliveries: await readDeliveries(ctx.pool, vasp, tx) };
    });
  });
}
