import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { AuthenticationError, NotFoundError, ValidationError } from '../../../lib/errors';
import { checkAddressQuery } from '../../../lib/address-webhook-signature';
import { findRegistryOwner } from '../../../address-book/store/registry-owner';
import type { IncomingConfig } from '../../../incoming/config';
import type { WebhookConfig } from '../../../webhooks/config';
import { FreeText } from '../../../lib/text';
import { decideIncoming, incomingStatus, routeIncoming } from '../../incoming/review';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { incomingStatusFor } from '../screening-visibility';

export interface IncomingRouteDeps {
  temporal: Client;
  pool: Pool;
  incoming: IncomingConfig;
  webhooks: WebhookConfig;
  subsidiaryDids: string[];
}

const Did = Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 512 });
const TxId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) });
// Who routes or decides is the authenticated caller, recorded in the workflow, the audit log and (for a decline) the
// network's record; a body that still names an `actor` is refused with a 400 saying so.
const RouteBody = Type.Object(
  {
    subsidiaryDid: Did,
    reason: FreeText({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
const DecisionBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('approve'), Type.Literal('decline')]),
    reason: FreeText({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
const Status = Type.Object({
  transactionId: Type.String(),
  phase: Type.String(),
  networkStatus: Type.String(),
  asset: Type.Optional(Type.String()),
  subsidiaryDid: Type.Optional(Type.String()),
  routedBy: Type.Optional(Type.String()),
  escalated: Type.Boolean(),
  screening: Type.Optional(Type.Unknown()),
  decision: Type.Optional(Type.Unknown()),
  policy: Type.Optional(Type.Unknown({ description: "The policy's decision: action, version, rule matched, reason" })),
  history: Type.Array(Type.Object({ at: Type.String(), event: Type.String(), detail: Type.Optional(Type.Unknown()) })),
});

/** Operators' side of incoming transfers: their status, routing a transfer nobody owns, deciding a screening hit. */
export function incomingRoutes(app: FastifyInstance, deps: IncomingRouteDeps) {
  app.get(
    '/v1/incoming-transfers/:id',
    {
      config: { roles: access.read },
      schema: {
        tags: ['incoming transfers'],
        summary: 'Status and history of an incoming transfer',
        params: TxId,
        response: { 200: Status },
        description:
          'The screening outcome, and the reasons given for decisions and routings, only for the compliance and admin roles.',
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof TxId>;
      return incomingStatusFor(principalOf(request), await incomingStatus(deps.temporal, id));
    },
  );

  app.post(
    '/v1/transfers/:id/route',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['incoming transfers'],
        summary: 'Route an incoming transfer nobody owns to a subsidiary of the group',
        params: TxId,
        body: RouteBody,
        response: { 200: Status },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof TxId>;
      const body = request.body as Static<typeof RouteBody>;
      if (!deps.subsidiaryDids.includes(body.subsidiaryDid))
        throw new ValidationError('subsidiaryDid', 'is not a subsidiary of the group');
      return routeIncoming(deps.temporal, id, body, principalOf(request));
    },
  );

  app.post(
    '/v1/transfers/:id/decision',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['incoming transfers'],
        summary: 'Approve or decline an incoming transfer held for review (audited)',
        description:
          "Recorded under the authenticated caller (subject, name, roles, credential) in the workflow's history, the audit log and, for a decline, the reason sent to the network. A body with `actor` answers 400.",
        params: TxId,
        body: DecisionBody,
        response: { 200: Status },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof TxId>;
      return decideIncoming(deps.temporal, id, request.body as Static<typeof DecisionBody>, principalOf(request));
    },
  );

  const AddressQuery = Type.Object({
    asset: Type.Optional(FreeText({ maxLength: 64 })),
    address: FreeText({ minLength: 1, maxLength: 1024 }),
  });
  app.get(
    '/webhooks/address/:vaspDid',
    {
      config: { public: "the network signs each address query with the webhook's secret" },
      // The signature covers the path and query as sent: it is checked before they are validated or used, so a caller
      // without the secret learns nothing from how its input is read (401 whatever the query holds). preParsing, not
      // onRequest: the webhook rate limit, an onRequest hook, counts the query first.
      preParsing: async (request) => {
        const { vaspDid } = request.params as { vaspDid: string };
        const secret = deps.webhooks.address[vaspDid];
        if (!secret || !deps.subsidiaryDids.includes(vaspDid))
          throw new NotFoundError(`no address webhook for ${vaspDid}`);
        const check = checkAddressQuery(secret, 'GET', request.url, request.headers, {
          requireTimestamp: deps.webhooks.addressTimestamp !== 'optional',
        });
        if (!check.ok) throw new AuthenticationError(`address webhook: ${check.reason}`);
      },
      schema: {
        tags: ['webhooks'],
        summary: 'Address webhook: does this subsidiary own the address? (signed by the network)',
        params: Type.Object({ vaspDid: Did }),
        querystring: AddressQuery,
        response: { 200: Type.Object({ owns: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { vaspDid } = request.params as { vaspDid: string };
      const { address } = request.query as Static<typeof AddressQuery>;
      return { owns: (await findRegistryOwner(deps.pool, address, [vaspDid])) === vaspDid };
    },
  );
}
