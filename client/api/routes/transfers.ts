import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { FreeText } from '../../../lib/text';
import { reviewOutgoing } from '../../transfers/review-outgoing';
import { checkOutgoingRequest } from '../../../outgoing/checks';
import { OutgoingTransferBody } from '../../../outgoing/request';
import {
  needTransfers,
  startOutgoingTransfer,
  transferState,
  type OutgoingStartDeps,
} from '../../transfers/start-outgoing';
import { ValidationError } from '../../../lib/errors';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';

const KEY = /^[A-Za-z0-9._:-]{1,128}$/;

const ErrorInfo = Type.Object({
  type: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
  rule: Type.Optional(Type.String()),
});

export const TransferStateSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  status: Type.String({
    description:
      'RECEIVED, HELD (the policy wants a person), PREPARED, then the network status (NEW, SENT, ACK, ACCEPTED, …); FAILED, EXPIRED or REFUSED',
  }),
  final: Type.Boolean(),
  originatorVaspDid: Type.String(),
  beneficiaryVaspDid: Type.Optional(Type.String()),
  asset: Type.String(),
  amount: Type.String(),
  mode: Type.Optional(Type.String({ description: 'end-to-end, hybrid, escrow, originator-only or hosted' })),
  transactionId: Type.Optional(Type.String()),
  error: Type.Optional(ErrorInfo),
  policy: Type.Optional(
    Type.Unknown({ description: "The outgoing policy's decision: action, policy version, rule matched, reason" }),
  ),
  review: Type.Optional(Type.Unknown({ description: "A person's decision on a transfer the policy held" })),
  history: Type.Array(Type.Object({ status: Type.String(), at: Type.String(), source: Type.String() })),
});

const ReviewBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('release'), Type.Literal('refuse')]),
    reason: FreeText({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);

/** The internal API of outgoing transfers. */
export function transferRoutes(app: FastifyInstance, deps: OutgoingStartDeps) {
  app.post(
    '/v1/transfers',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['transfers'],
        summary: 'Start an outgoing Travel Rule transfer',
        description:
          "The body is the network's tx/create body with plain IVMS101 `originator` and `beneficiary`; the data is " +
          "encrypted here with the originator's key (end-to-end, or hybrid with `?hybrid=1`). The `Idempotency-Key` " +
          'header names the transfer: repeating a request returns the same transfer. Bad input answers 400 naming the ' +
          'field, and nothing is stored or started.',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        querystring: Type.Object({
          hybrid: Type.Optional(
            Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')]),
          ),
        }),
        body: OutgoingTransferBody,
        response: { 200: TransferStateSchema, 202: TransferStateSchema },
      },
    },
    async (request: FastifyRequest, reply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key === '')
        throw new ValidationError(
          'Idempotency-Key',
          'is required: a header naming this transfer, so a repeat returns it',
        );
      if (!KEY.test(key))
        throw new ValidationError('Idempotency-Key', 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -');
      const ctx = needTransfers(deps);
      const hybrid = ['1', 'true'].includes((request.query as { hybrid?: string }).hybrid ?? '');
      const { body, plan } = await checkOutgoingRequest(ctx, request.body, { source: 'api', hybrid });
      const { initial } = await startOutgoingTransfer(
        deps,
        key,
        { body, source: 'api', hybrid },
        plan,
        principalOf(request),
      );
      // A new workflow has not run its first task yet: answer with the state it starts in rather than wait for it.
      if (initial) return reply.code(202).send(initial);
      return reply.code(200).send(await transferState(deps, key));
    },
  );

  app.get(
    '/v1/transfers/:id',
    {
      config: { roles: access.read },
      schema: {
        tags: ['transfers'],
        summary: 'Status of an outgoing transfer and its history',
        params: Type.Object({ id: Type.String({ pattern: KEY.source }) }),
        response: { 200: TransferStateSchema },
      },
    },
    async (request) => transferState(deps, (request.params as { id: string }).id),
  );

  app.post(
    '/v1/transfers/:id/review',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['transfers'],
        summary: 'Release or refuse an outgoing transfer the policy held for a person (status HELD; audited)',
        description:
          'Release sends the transfer; refuse ends it REFUSED. Recorded under the authenticated caller in the history and the audit log. 409 when the transfer is not held.',
        params: Type.Object({ id: Type.String({ pattern: KEY.source }) }),
        body: ReviewBody,
        response: { 200: TransferStateSchema },
      },
    },
    async (request) =>
      reviewOutgoing(
        deps.temporal,
        (request.params as { id: string }).id,
        request.body as Static<typeof ReviewBody>,
        principalOf(request),
      ),
  );
}
