/**
 * Transactions on the network's API (bearer-guarded; register inside the API plugin with `transactionRoutes`):
 *
 * | method | path | input | answer |
 * |---|---|---|---|
 * | POST | `/tx/create` | TransactionCreateRequest | Transaction (200), `transactionType` as /tx/validate/full classifies it; 400 NotabeneTransactionValidationError / NotabeneTransactionError; 403; 404; 409 while the same transactionRef is in flight |
 * | GET | `/tx/info?id=` | | Transaction; hosted mode adds the decrypted `ivms101` |
 * | POST | `/tx/update` | TransactionUpdateRequest `{id, …}` | Transaction |
 * | POST | `/tx/notify` | TransactionNotifyRequest `{txHash, transactionAmount, transactionAsset, destination, beneficiaryVASPdid, origin?, customerRef?, …}`, by the beneficiary VASP | Transaction (as tx/info): the matching message, or a new INCOMPLETE one (notify.ts); 400 naming the field; 400 UserDIDNotAdminforVASPError for another VASP's DID |
 * | GET | `/tx/list?vaspDID=&page=&resultsPerPage=&status=&txDirection=&transactionRef=&transactionAsset=&wallet=&sort=` | | `{transactions, paginateInfo}` |
 * | POST | `/tx/approve` `/tx/cancel` `/tx/confirm` `/tx/reject` `/tx/accept` `/tx/decline` `/tx/notReady` | `id` in the query or the JSON body; optional body `reason` | Transaction; 400 NotabeneTransactionInvalidStatusError; 403 UserDIDNotAdminforVASPError |
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Did, documented, Uuid, WholeNumber } from '../openapi';
import type { SandboxContext } from '../context';
import { accessOf } from '../auth/guard';
import { ACTIONS } from './states';
import { HostedKeys } from '../pii-store/hosted';
import { OwnershipProofSchema } from './proofs';
import { actorOf, TransactionService } from './service';

export {
  TransactionService,
  actorOf,
  requireParty,
  type Actor,
  type TransactionEvent,
  type TransactionListener,
  type HostedCrypto,
} from './service';
export type { Transaction, TransactionAction } from './model';
export type { OwnershipProof, ProofType } from './proofs';
export {
  TRANSITIONS,
  STATUSES,
  ACTIONS,
  FINAL_STATUSES,
  nextStatus,
  type TransactionStatus,
  type TransactionActionName,
} from './states';

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

const bodyOf = (body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};

const Text = Type.String({ maxLength: 1024 });
const Asset = Type.Union([
  Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }),
  Type.Object({ caip19: Type.String({ minLength: 1 }) }),
  Type.Object({ coingeckoId: Type.String({ minLength: 1 }), network: Type.String({ minLength: 1 }) }),
]);
const Amount = Type.String({
  pattern: '^0*[1-9][0-9]*$',
  maxLength: 80,
  description: 'Base units, a whole number > 0',
});
const PiiTree = Type.Object(
  {},
  { additionalProperties: true, description: 'PII_IVMS: the IVMS101 tree with CIDs or encrypted strings as leaves' },
);
const Party = Type.Object(
  {},
  { additionalProperties: true, description: 'IVMS101 originator or beneficiary (hosted mode)' },
);
/** An optional field: the network treats null as absent. */
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Protocol = Type.Union([Type.Literal('TRLight'), Type.Literal('TRP'), Type.Literal('OpenVASP')]);

/** TransactionCreateRequest (model.ts parseCreateRequest). */
const CreateBody = Type.Object({
  transactionAsset: Asset,
  transactionAmount: Amount,
  originatorVASPdid: Did,
  transactionBlockchainInfo: Type.Object({
    txHash: Optional(Text),
    origin: Optional(Text),
    destination: Type.String({ minLength: 1, maxLength: 1024 }),
  }),
  transactionRef: Optional(Type.String({ maxLength: 256 })),
  transactionAssetDecimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })),
  customAssetPrice: Optional(
    Type.Object({ priceUSD: Type.Number({ minimum: 0 }), decimals: Type.Integer({ minimum: 0, maximum: 255 }) }),
  ),
  beneficiaryVASPdid: Optional(Did),
  beneficiaryVASPname: Optional(Text),
  originatorDid: Optional(Did),
  beneficiaryDid: Optional(Did),
  originatorRef: Optional(Text),
  beneficiaryRef: Optional(Text),
  originator: Optional(Party),
  beneficiary: Optional(Party),
  pii: Optional(PiiTree),
  encrypted: Optional(Type.String({ maxLength: 4 * 1024 * 1024 })),
  protocol: Optional(Protocol),
  notificationEmail: Optional(Text),
  originatorProof: Optional(OwnershipProofSchema),
  beneficiaryProof: Optional(OwnershipProofSchema),
  blockchainTransactionTimestamp: Optional(Text),
});

/** TransactionUpdateRequest (model.ts parseUpdateRequest): the id and any updatable field. */
const UpdateBody = Type.Object({
  id: Uuid,
  beneficiaryDid: Optional(Did),
  originatorDid: Optional(Did),
  beneficiaryVASPdid: Optional(Did),
  originatorVASPdid: Optional(Did),
  beneficiaryRef: Optional(Text),
  originatorRef: Optional(Text),
  beneficiaryVASPname: Optional(Text),
  notificationEmail: Optional(Text),
  txHash: Optional(Text),
  destination: Optional(Text),
  origin: Optional(Text),
  protocol: Optional(Text),
  blockchainTransactionTimestamp: Optional(Text),
  encrypted: Optional(Type.String({ maxLength: 4 * 1024 * 1024 })),
  beneficiaryProof: Optional(OwnershipProofSchema),
  originatorProof: Optional(OwnershipProofSchema),
  beneficiary: Optional(Party),
  originator: Optional(Party),
  pii: Optional(PiiTree),
  skipBeneficiaryDataValidation: Type.Optional(Type.Boolean()),
  isNonCustodial: Type.Optional(Type.Boolean()),
  onBehalfOfMyself: Type.Optional(Type.Boolean()),
});

/** TransactionNotifyRequest (notify.ts parseNotifyRequest). */
const NotifyBody = Type.Object({
  txHash: Type.String({ minLength: 1, maxLength: 1024, description: "The deposit's hash, in its chain's form" }),
  transactionAmount: Amount,
  transactionAsset: Asset,
  transactionAssetDecimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })),
  beneficiaryVASPdid: Did,
  destination: Type.String({ minLength: 1, maxLength: 1024 }),
  origin: Optional(Text),
  customerRef: Optional(Text),
  network: Optional(Text),
});

const ListQuery = Type.Object({
  vaspDID: Did,
  page: Type.Optional(WholeNumber(0, 1_000_000)),
  resultsPerPage: Type.Optional(WholeNumber(1, 100)),
  status: Type.Optional(Type.String({ description: 'Statuses, comma-separated' })),
  txDirection: Type.Optional(
    Type.Union([Type.Literal('incoming'), Type.Literal('outgoing'), Type.Literal('internal')]),
  ),
  transactionRef: Type.Optional(Type.String()),
  transactionAsset: Type.Optional(Type.String()),
  wallet: Type.Optional(
    Type.String({ maxLength: 1024, description: 'An address: the transfer was sent from it or to it' }),
  ),
  sort: Type.Optional(
    Type.Union(
      ['createdAt', 'updatedAt', 'transactionAmount'].flatMap((f) => [
        Type.Literal(`${f}:ASC`),
        Type.Literal(`${f}:DESC`),
      ]),
    ),
  ),
});

const ActionQuery = Type.Object({ id: Type.Optional(Uuid), reason: Type.Optional(Text) });
const ActionBody = Type.Object({ id: Type.Optional(Uuid), reason: Type.Optional(Text) });

export function transactionRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  const service = transactionService(ctx);
  api.post('/tx/create', documented({ body: CreateBody }), async (request) =>
    service.create(accessOf(request), request.body),
  );
  api.get('/tx/info', documented({ querystring: Type.Object({ id: Uuid }) }), async (request) =>
    service.info(accessOf(request), (request.query as Record<string, unknown>).id),
  );
  api.post('/tx/update', documented({ body: UpdateBody }), async (request) =>
    service.update(accessOf(request), request.body),
  );
  api.post('/tx/notify', documented({ body: NotifyBody }), async (request) =>
    service.notify(accessOf(request), request.body),
  );
  api.get('/tx/list', documented({ querystring: ListQuery }), async (request) =>
    service.list(accessOf(request), request.query as Record<string, unknown>),
  );
  for (const action of ACTIONS) {
    api.post(
      `/tx/${action}`,
      documented({ querystring: ActionQuery, body: ActionBody, description: 'The id in the query or the body' }),
      async (request) => {
        const query = request.query as Record<string, unknown>;
        const body = bodyOf(request.body);
        const id = query.id ?? body.id;
        const reason = body.reason ?? query.reason;
        return service.act(actorOf(accessOf(request)), id, action, reason as string | undefined);
      },
    );
  }
}
