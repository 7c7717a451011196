/**
 * Transactions on the network's API (bearer-guarded; register inside the API plugin with `transactionRoutes`):
 *
 * | method | path | input | answer |
 * |---|---|---|---|
 * | POST | `/tx/create` | TransactionCreateRequest | Transaction (200); 400 NotabeneTransactionValidationError / NotabeneTransactionError; 403; 404; 409 while the same transactionRef is in flight |
 * | GET | `/tx/info?id=` | | Transaction; hosted mode adds the decrypted `ivms101` |
 * | POST | `/tx/update` | TransactionUpdateRequest `{id, …}` | Transaction |
 * | GET | `/tx/list?vaspDID=&page=&resultsPerPage=&status=&txDirection=&transactionRef=&transactionAsset=&sort=` | | `{transactions, paginateInfo}` |
 * | POST | `/tx/approve` `/tx/cancel` `/tx/confirm` `/tx/reject` `/tx/accept` `/tx/decline` `/tx/notReady` | `id` in the query or the JSON body; optional body `reason` | Transaction; 400 NotabeneTransactionInvalidStatusError; 403 UserDIDNotAdminforVASPError |
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context';
import { accessOf } from '../auth/guard';
import { ACTIONS } from './states';
import { HostedKeys } from '../pii-store/hosted';
import { actorOf, TransactionService } from './service';

export { TransactionService, actorOf, requireParty, type Actor, type TransactionEvent, type TransactionListener, type HostedCrypto } from './service';
export type { Transaction, TransactionAction } from './model';
export { TRANSITIONS, STATUSES, ACTIONS, FINAL_STATUSES, nextStatus, type TransactionStatus, type TransactionActionName } from './states';

const services = new WeakMap<SandboxContext, TransactionService>();

/** The one transaction service of a sandbox; other parts subscribe to its changes or act through it. */
export function transactionService(ctx: SandboxContext): TransactionService {
  let s = services.get(ctx);
  if (!s) {
    s = new TransactionService(ctx.pool, ctx.logger);
    s.hosted = new HostedKeys(ctx.pool);
    services.set(ctx, s);
  }
  return s;
}

const bodyOf = (body: unknown): Record<string, unknown> => (typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {});

export function transactionRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  const service = transactionService(ctx);
  api.post('/tx/create', async (request) => service.create(accessOf(request), request.body));
  api.get('/tx/info', async (request) => service.info(accessOf(request), (request.query as Record<string, unknown>).id));
  api.post('/tx/update', async (request) => service.update(accessOf(request), request.body));
  api.get('/tx/list', async (request) => service.list(accessOf(request), request.query as Record<string, unknown>));
  for (const action of ACTIONS) {
    api.post(`/tx/${action}`, async (request) => {
      const query = request.query as Record<string, unknown>;
      const body = bodyOf(request.body);
      const id = query.id ?? body.id;
      const reason = body.reason ?? query.reason;
      return service.act(actorOf(accessOf(request)), id, action, reason as string | undefined);
    });
  }
}
