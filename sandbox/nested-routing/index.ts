/**
 * Nested VASPs on the network's API (router.ts has the resolution order):
 *
 * | method | path | who | answer |
 * |---|---|---|---|
 * | POST | `/tx/redirect?id=&to=` | users of the gateway that holds the message | Transaction (beneficiary now the subsidiary); 400 NotabeneTransactionInvalidStatusError unless SENT; 400 NotabeneTransactionError when `to` is not its subsidiary |
 * | POST | `/integrations/:vaspDID/address-query-webhook` `{url, params}` | users of the subsidiary (or its gateway), `manage` | `{secret}`; registering again replaces it |
 * | DELETE | `/integrations/:vaspDID/address-query-webhook` | same | `{isDeleted, message}` |
 * | POST | `/auth/customerToken` `{vaspDID, customerRef}` | `auth.customerToken` on that VASP | `{hash, access_token, token_type:'Bearer', scope:'customer'}`, valid 5 minutes, bound to that one VASP |
 * | POST | `/sandbox/simulate/transfers` | the sandbox operator's token (sandbox/auth/test-routes.ts), for a VASP the seed marks simulated | a counterparty (a simulated VASP, see sandbox/counterparties) sends a transfer end to end: its IVMS101 is encrypted to the beneficiary's published key and its own, stored, and the transaction created as that VASP |
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { Type } from 'typebox';
import { Did, documented, Uuid } from '../openapi';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { badRequest, notAdmin, notFound } from '../errors';
import { testRoutesOn } from '../auth/test-routes';
import { serviceSecret } from '../auth/store';
import { sendAsSimulated } from '../counterparties/send';
import { subsidiaryName } from '../directory/store';
import { actorOf, requireParty, transactionService } from '../transactions';
import { isUuid } from '../transactions/model';
import { invalidStatus } from '../transactions/service';
import { NestedRouter } from './router';
import { deleteAddressQueryWebhook, upsertAddressQueryWebhook } from './store';

export { NestedRouter } from './router';

const DID = /^did:[a-zA-Z0-9]*:.+$/;
const PARAMS = /^\?([\w-]+(=[\w-]*)?(&[\w-]+(=[\w-]*)?)*)?$/;
const CUSTOMER_TOKEN_TTL = '5m';

const VaspParams = Type.Object({ vaspDID: Did });
const AddressQueryWebhook = Type.Object({
  url: Type.String({ format: 'uri', maxLength: 2048, description: 'http(s)' }),
  params: Type.Optional(
    Type.String({ pattern: PARAMS.source, description: 'The query string the network adds, "?" for none' }),
  ),
});
const CustomerTokenBody = Type.Object({ vaspDID: Did, customerRef: Type.String({ minLength: 1, pattern: '\\S' }) });
const SimulateBody = Type.Object(
  {
    originatorVASPdid: Did,
    beneficiaryVASPdid: Did,
    originator: Type.Optional(Type.Object({}, { additionalProperties: true })),
    beneficiary: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'A TransactionCreateRequest, with the IVMS101 parties in plain text' },
);

export function nestedRoutingRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  const transactions = transactionService(ctx);

  api.post('/tx/redirect', documented({ querystring: Type.Object({ id: Uuid, to: Did }) }), async (request) => {
    const { id, to } = request.query as { id?: string; to?: string };
    if (!id) throw badRequest('NotabeneTransactionValidationError', 'List of missing fields: id');
    if (!isUuid(id)) throw badRequest('NotabeneTransactionValidationError', 'id: must be a transaction id (UUID)');
    if (!to || !DID.test(to))
      throw badRequest('NotabeneTransactionValidationError', 'to: must be the DID of a subsidiary VASP');
    const actor = actorOf(accessOf(request));
    const row = await transactions.load(ctx.pool, id);
    if (!row) throw notFound(`Transaction ${id} not found`);
    requireParty(actor, row.body, notAdmin);
    return transactions.applyChange(id, 'redirect', async (tx, client) => {
      const gateway = tx.beneficiaryVASPdid;
      if (!gateway || !actor.vasps.includes(gateway)) {
        throw notAdmin(`Only the gateway holding transaction ${tx.id} may redirect it`);
      }
      const childName = await subsidiaryName(client, to, gateway);
      if (childName === undefined)
        throw badRequest('NotabeneTransactionError', `${to} is not a subsidiary of ${gateway}`);
      if (tx.status !== 'SENT') throw invalidStatus(tx.status, 'redirect');
      tx.beneficiaryVASPdid = to;
      tx.beneficiaryVASPname = childName;
      return { issuerDid: actor.issuerDid, actionData: `to ${to}` };
    });
  });

  api.post(
    '/integrations/:vaspDID/address-query-webhook',
    documented({ params: VaspParams, body: AddressQueryWebhook }),
    async (request) => {
      const { vaspDID } = request.params as { vaspDID: string };
      accessOf(request).require(vaspDID, 'manage');
      const body = (request.body ?? {}) as { url?: unknown; params?: unknown };
      let url: URL;
      try {
        url = new URL(String(body.url));
        if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error();
      } catch {
        throw badRequest('ValidationError', 'url: must be an https URL');
      }
      const params = body.params === undefined ? '?' : String(body.params);
      if (!PARAMS.test(params))
        throw badRequest('ValidationError', `params: must match ${PARAMS.source} (use "?" for none)`);
      const secret = randomBytes(24).toString('base64url');
      await upsertAddressQueryWebhook(ctx.pool, vaspDID, { url: url.toString(), params, secret });
      return { secret };
    },
  );

  api.delete('/integrations/:vaspDID/address-query-webhook', documented({ params: VaspParams }), async (request) => {
    const { vaspDID } = request.params as { vaspDID: string };
    accessOf(request).require(vaspDID, 'manage');
    const deleted = await deleteAddressQueryWebhook(ctx.pool, vaspDID);
    return {
      isDeleted: deleted,
      message: deleted ? 'Address query webhook deleted' : 'No address query webhook was registered',
    };
  });

  api.post('/auth/customerToken', documented({ body: CustomerTokenBody }), async (request) => {
    const body = (request.body ?? {}) as { vaspDID?: unknown; customerRef?: unknown };
    if (typeof body.vaspDID !== 'string' || !DID.test(body.vaspDID))
      throw badRequest('ValidationError', 'vaspDID: is required (a VASP DID)');
    if (typeof body.customerRef !== 'string' || !body.customerRef.trim())
      throw badRequest('ValidationError', 'customerRef: is required');
    const access = accessOf(request);
    access.require(body.vaspDID, 'auth.customerToken');
    const key = await customerTokenKey(ctx);
    const hash = createHash('sha256').update(`${body.vaspDID}\u0000${body.customerRef}`).digest('hex');
    const token = await new SignJWT({ vaspDID: body.vaspDID, customerRef: body.customerRef, scope: 'customer' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ctx.config.publicUrl)
      .setSubject(`${body.vaspDID}#${hash.slice(0, 16)}`)
      .setAudience(ctx.config.publicUrl)
      .setIssuedAt()
      .setExpirationTime(CUSTOMER_TOKEN_TTL)
      .sign(key);
    return { hash, access_token: token, token_type: 'Bearer', scope: 'customer' };
  });
}

async function customerTokenKey(ctx: SandboxContext): Promise<Uint8Array> {
  return new Uint8Array(await serviceSecret(ctx.pool, 'customer-token-key', randomBytes(32)));
}

/**
 * Starts routing (subscribed to every transaction change, resolving in the background while the server runs) and the
 * sandbox-only endpoint that makes a simulated counterparty send a transfer, with its personal data encrypted as a real
 * VASP would.
 */
export async function nestedRoutingPublicRoutes(app: FastifyInstance, ctx: SandboxContext): Promise<void> {
  const transactions = transactionService(ctx);
  const router = new NestedRouter(ctx.pool, transactions, ctx.logger);
  transactions.onChange(router.onChange);
  app.addHook('onReady', async () => router.start());
  app.addHook('onClose', async () => router.stop());
  if (!testRoutesOn(ctx.config)) return;
  app.post('/sandbox/simulate/transfers', documented({ body: SimulateBody }), async (request) => {
    return sendAsSimulated(ctx.pool, transactions, (request.body ?? {}) as Record<string, unknown>);
  });
}
