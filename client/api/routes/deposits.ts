/**
 * Deposits the custody system reports (deposits/): operators report them, every role reads. Each deposit runs as a
 * workflow (workflows/deposit.ts) that holds it until it is released or must be returned; the store is what is read.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { depositOrNotFound, reportDeposit, type DepositDeps } from '../../../deposits/deposits';
import { listDeposits } from '../../../deposits/store';
import { DEPOSIT_STATUSES, type DepositStatus } from '../../../deposits/types';
import { FreeText } from '../../../lib/text';
import { confirmDepositReturn, decideDeposit } from '../../deposits/decide';
import { principalOf } from '../auth/plugin';
import { access } from '../auth/roles';
import { IDEMPOTENCY_KEY } from '../idempotency-key';
import { PageOf, pageAnswer, paging, Paging } from './lists';

export type DepositRouteDeps = DepositDeps;

const Id = Type.Object({ id: Type.String({ pattern: IDEMPOTENCY_KEY.source }) });
const Nullable = Type.Union([Type.String(), Type.Null()]);

const Deposit = Type.Object({
  id: Type.String(),
  vaspDid: Type.String({ description: 'the subsidiary the deposit reached' }),
  chain: Type.String(),
  asset: Type.String(),
  txHash: Type.String({ description: 'lower case' }),
  outputIndex: Type.Integer(),
  to: Type.String(),
  from: Nullable,
  customerRef: Type.Union([Type.String(), Type.Null()], { description: 'the receiving customer, as reported' }),
  proofRequired: Type.Boolean({
    description: 'from a self-hosted wallet above the proof threshold: released by the customer’s ownership proof',
  }),
  amount: Type.String({ description: 'base units' }),
  status: Type.String({ description: DEPOSIT_STATUSES.join(', ') }),
  reason: Nullable,
  classification: Type.String({
    description: 'BELOW_THRESHOLD, TRAVELRULE or UNKNOWN (the subsidiary’s jurisdiction)',
  }),
  transactionId: Type.Union([Type.String(), Type.Null()], { description: "the network's matched transaction" }),
  networkStatus: Nullable,
  dataDeadlineAt: Type.String({
    description:
      'until when an INCOMPLETE match waits for the originator’s data: the report’s time plus the deadline, counted again from the network’s request to the originator once the message is INCOMPLETE',
  }),
  createdBy: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  decidedAt: Nullable,
  decidedBy: Type.Union([Type.String(), Type.Null()], {
    description: 'who made it final: the compliance officer (oidc:…, apikey:…) or system:deposit',
  }),
  returnTxHash: Type.Union([Type.String(), Type.Null()], { description: 'the confirmed return’s transaction' }),
  returnedAt: Nullable,
  escalatedAt: Type.Union([Type.String(), Type.Null()], {
    description: 'a required return not confirmed within 10 business days was escalated then',
  }),
});

// The rules (txHash by chain, whole base units, the group's address) are checked in deposits/deposits.ts, so every
// refusal names the field and the rule the same way; the schema only bounds sizes and types.
const ReportBody = Type.Object(
  {
    vaspDid: Type.String({ maxLength: 300, description: 'the subsidiary of the group the deposit reached' }),
    asset: Type.String({ maxLength: 128, description: 'ETH, a -ERC20 token, eip155:…, BTC' }),
    txHash: Type.String({ maxLength: 130, description: 'Ethereum: 0x and 64 hex digits; Bitcoin: 64 hex digits' }),
    outputIndex: Type.Optional(Type.Integer({ description: 'the output (Bitcoin) or transfer (token) index; 0' })),
    to: Type.String({ maxLength: 128, description: "the group's address the funds reached" }),
    from: Type.Optional(Type.String({ maxLength: 128, description: 'the sending address, when known' })),
    amount: Type.String({ maxLength: 100, description: 'base units, digits only (no decimals)' }),
    customerRef: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          'the receiving customer: an opaque reference (1 to 128 of A-Z a-z 0-9 . _ : @ / -), the one its wallet ' +
          'proofs carry; required for a self-hosted deposit above the proof threshold',
      }),
    ),
    fromSelfHosted: Type.Optional(
      Type.Boolean({ description: '`from` is a self-hosted wallet (no VASP’s); a proven wallet is one anyway' }),
    ),
  },
  { additionalProperties: false },
);
// Who decides is the authenticated caller, written with the decision and audited.
const DecisionBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('release'), Type.Literal('return')]),
    reason: FreeText({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);
const ReturnedBody = Type.Object(
  {
    txHash: Type.String({ maxLength: 130, description: 'the return’s transaction on the deposit’s chain' }),
  },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(DEPOSIT_STATUSES.map((s) => Type.Literal(s)))),
    vaspDid: Type.Optional(Type.String({ maxLength: 300 })),
    ...Paging,
  },
  { additionalProperties: false },
);

export function depositRoutes(app: FastifyInstance, deps: DepositRouteDeps) {
  app.post(
    '/v1/deposits',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['deposits'],
        summary: 'Report a deposit to one of the group’s addresses: held until released or a return is required',
        description:
          'Idempotent on the chain, txHash and output index: the same deposit again answers 200 with the deposit ' +
          'already stored and starts nothing; the same output with another subsidiary, address or amount is 409. ' +
          'Below the subsidiary’s threshold the deposit is RELEASED at once; otherwise it is matched at the network. ' +
          'A deposit from a self-hosted wallet (`from` with `fromSelfHosted: true`, or a wallet with a VERIFIED ' +
          'proof) above the subsidiary’s ownership-proof threshold (EU above 1,000 EUR, CH any amount) needs `from` ' +
          'and `customerRef` (400 naming the field otherwise) and is not matched at the network (no originator VASP ' +
          'sends data for it): the customer’s VERIFIED proof of `from` releases it, at once or after AWAITING_PROOF; ' +
          'none by its data deadline requires a return.',
        body: ReportBody,
        response: { 200: Deposit, 201: Deposit },
      },
    },
    async (request, reply) => {
      const { deposit, created } = await reportDeposit(
        deps,
        request.body as Static<typeof ReportBody>,
        principalOf(request),
      );
      return reply.code(created ? 201 : 200).send(deposit);
    },
  );

  app.get(
    '/v1/deposits',
    {
      config: { roles: access.read },
      schema: {
        tags: ['deposits'],
        summary: 'Deposits by report time (newest first by default), filtered by status and subsidiary',
        querystring: ListQuery,
        response: { 200: PageOf(Deposit) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof ListQuery>;
      const found = await listDeposits(
        deps.pool,
        { status: q.status as DepositStatus | undefined, vaspDid: q.vaspDid },
        paging(q),
      );
      return pageAnswer(found);
    },
  );

  app.get(
    '/v1/deposits/:id',
    {
      config: { roles: access.read },
      schema: { tags: ['deposits'], summary: 'One deposit', params: Id, response: { 200: Deposit } },
    },
    async (request) => depositOrNotFound(deps.pool, (request.params as Static<typeof Id>).id),
  );
  app.post(
    '/v1/deposits/:id/decision',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['deposits'],
        summary: 'A compliance officer releases a held deposit or requires its return (audited)',
        description:
          'Only a deposit in HELD, AWAITING_DATA or AWAITING_PROOF: `release` makes it RELEASED, `return` ' +
          'RETURN_REQUIRED, with the reason and the caller as `decidedBy`. Answers the deposit once its workflow wrote ' +
          'the decision; 409 when the deposit is already final (or became final first), 404 for an unknown id.',
        params: Id,
        body: DecisionBody,
        response: { 200: Deposit },
      },
    },
    async (request) =>
      decideDeposit(
        deps,
        (request.params as Static<typeof Id>).id,
        request.body as Static<typeof DecisionBody>,
        principalOf(request),
      ),
  );

  app.post(
    '/v1/deposits/:id/returned',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['deposits'],
        summary: 'The custody system confirms it returned a deposit: RETURN_REQUIRED becomes RETURNED (audited)',
        description:
          'The txHash is checked for the deposit’s chain like a report’s (400 naming `txHash`). Only a deposit in ' +
          'RETURN_REQUIRED: any other status answers 409 naming it.',
        params: Id,
        body: ReturnedBody,
        response: { 200: Deposit },
      },
    },
    async (request) =>
      confirmDepositReturn(
        deps,
        (request.params as Static<typeof Id>).id,
        (request.body as Static<typeof ReturnedBody>).txHash,
        principalOf(request),
      ),
  );
}
