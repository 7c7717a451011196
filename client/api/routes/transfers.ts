import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { FreeText } from '../../../lib/text';
import { reviewOutgoing } from '../../transfers/review-outgoing';
import { addTxHash } from '../../transfers/tx-hash';
import { checkOutgoingRequest } from '../../../outgoing/checks';
import { OutgoingTransferBody, ValidateTransferBody } from '../../../outgoing/request';
import { classifyOutgoing, validateTransfer, type ValidateDeps } from '../../../outgoing/validate';
import { createPricing, type Pricing } from '../../../pricing';
import { loadPricingConfig } from '../../../pricing/config';
import type { JurisdictionConfig } from '../../../jurisdictions/config';
import {
  needTransfers,
  startOutgoingTransfer,
  transferState,
  type OutgoingStartDeps,
} from '../../transfers/start-outgoing';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { IDEMPOTENCY_KEY, idempotencyKeyOf } from '../idempotency-key';

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
      "RECEIVED, HELD (the policy wants a person), AWAITING_PROOF (a self-hosted beneficiary wallet whose ownership proof the sending subsidiary's jurisdiction asks for at the amount: nothing is sent until a wallet proof of the customer, `originatorRef`, is VERIFIED), PREPARED, then the network status (NEW, SENT, ACK, ACCEPTED, …); FAILED, EXPIRED (also: no proof before TRANSFER_ANSWER_DEADLINE) or REFUSED",
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
  classification: Type.Optional(
    Type.Unknown({
      description:
        'How the transfer was classified when requested (the answer of POST /v1/transfers/validate plus `personalData`: `all` or the IVMS101 paths sent, and for a self-hosted beneficiary wallet `ownershipProofRequired`: whether its ownership proof is asked for at the amount, and `beneficiaryWallet` `{asset, address}`: the wallet whose proofs GET /v1/wallet-proofs?address= lists); null for transfers from before and those the agent started',
    }),
  ),
  txHash: Type.Optional(
    Type.String({
      description: 'The blockchain transaction, once the custody system broadcast it (PATCH /v1/transfers/:id)',
    }),
  ),
  broadcast: Type.Optional(
    Type.Object(
      {
        event: Type.Union([Type.Literal('transfer.release'), Type.Literal('transfer.halt')]),
        reason: Type.String(),
        rule: Type.String({
          description:
            "the sending subsidiary's rule: on-accepted, at-once or after-timeout:<duration> (TRANSFER_BROADCAST)",
        }),
        at: Type.String(),
      },
      {
        description:
          'Whether the custody system may broadcast the funds (transfer.release) or must not (transfer.halt), once decided; also sent to CUSTODY_CALLBACK_URL, signed',
      },
    ),
  ),
  history: Type.Array(Type.Object({ status: Type.String(), at: Type.String(), source: Type.String() })),
});

const TxHashBody = Type.Object(
  {
    txHash: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "The broadcast transaction's hash: 0x and 64 hex digits on Ethereum, 64 hex digits on Bitcoin",
    }),
  },
  { additionalProperties: false },
);

const ReviewBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('release'), Type.Literal('refuse')]),
    reason: FreeText({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);

const Issue = Type.Object({ code: Type.String(), message: Type.String(), field: Type.Optional(Type.String()) });
const Threshold = Type.Object({
  jurisdiction: Type.String({ description: 'the country code whose rules apply, EU or FATF' }),
  currency: Type.String(),
  threshold: Type.Number(),
  amount: Type.Optional(Type.Number({ description: "the transfer's value in `currency`; absent when unpriced" })),
  source: Type.String(),
  confidence: Type.String({ description: 'primary, notabene or secondary' }),
});
export const TransferValidationResultSchema = Type.Object({
  isValid: Type.Boolean(),
  type: Type.Union([
    Type.Literal('BELOW_THRESHOLD'),
    Type.Literal('NON_CUSTODIAL'),
    Type.Literal('TRAVELRULE'),
    Type.Literal('UNKNOWN'),
  ]),
  beneficiaryAddressType: Type.Union([Type.Literal('HOSTED'), Type.Literal('UNHOSTED'), Type.Literal('UNKNOWN')]),
  addressSource: Type.Union([Type.Literal('GROUP_REGISTRY'), Type.Literal('DIRECTORY'), Type.Literal('UNKNOWN')]),
  beneficiaryVASPname: Type.Optional(Type.String()),
  errors: Type.Array(Type.String(), { description: 'what the own jurisdiction requires and is missing: `CODE: path`' }),
  warnings: Type.Array(Type.String(), { description: "what the counterparty's jurisdiction requires and is missing" }),
  details: Type.Object({ errors: Type.Array(Issue), warnings: Type.Array(Issue) }),
  thresholds: Type.Object({ own: Threshold, counterparty: Threshold }),
  price: Type.Union([
    Type.Object({
      value: Type.Number(),
      currency: Type.String(),
      price: Type.Number(),
      priceCurrency: Type.String(),
      source: Type.String(),
      at: Type.String(),
    }),
    Type.Object({ unknown: Type.String({ description: 'why the amount could not be priced' }) }),
  ]),
});

export interface TransferRouteDeps extends OutgoingStartDeps {
  /** Prices for thresholds (pricing/); absent: the embedded table. */
  pricing?: Pricing;
  /** Each subsidiary's jurisdiction (SUBSIDIARY_JURISDICTIONS); absent: FATF's rules for all. */
  jurisdictions?: JurisdictionConfig;
}

/** The internal API of outgoing transfers. */
export function transferRoutes(app: FastifyInstance, deps: TransferRouteDeps) {
  let pricing = deps.pricing;
  const validateDeps = (): ValidateDeps => ({
    ctx: needTransfers(deps),
    pricing: (pricing ??= createPricing(loadPricingConfig({}))),
    jurisdictions: deps.jurisdictions ?? { subsidiaryCountries: {} },
  });
  const withClassification = async <T extends object>(id: string, state: T) => {
    const { store } = needTransfers(deps);
    const [classification, txHash] = await Promise.all([store.classification(id), store.txHash(id)]);
    return { ...state, classification, ...(txHash ? { txHash } : {}) };
  };

  app.post(
    '/v1/transfers/validate',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['transfers'],
        summary: 'Classify an outgoing transfer before sending it (the withdrawal screen asks first)',
        description:
          "The body of POST /v1/transfers, with `originator` and `beneficiary` optional and partial. Answers the network's " +
          '`TransactionFullValidationResult` (`isValid`, `type`, `beneficiaryAddressType`, `addressSource`, ' +
          "`beneficiaryVASPname`, `errors`, `warnings`) plus structured `details`, both sides' `thresholds` and the " +
          '`price` used (or why none: an unpriceable amount is UNKNOWN, never below the threshold). Errors name the IVMS101 ' +
          "paths the sending subsidiary's jurisdiction requires (SUBSIDIARY_JURISDICTIONS, else FATF), warnings what the " +
          "counterparty's requires (its directory incorporationCountry, else FATF). Nothing is stored or sent. Bad input " +
          '(an amount that is not 1 to 78 digits, an asset the price table does not know without customAssetPrice, a ' +
          'country code outside ISO 3166-1, a negative customAssetPrice) answers 400 naming the field.',
        body: ValidateTransferBody,
        response: { 200: TransferValidationResultSchema },
      },
    },
    async (request) => validateTransfer(validateDeps(), request.body as ValidateTransferBody),
  );
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
          'field, and nothing is stored or started. To a self-hosted wallet (no VASP owns the address, and ' +
          "`isNonCustodial`, `beneficiaryProof` or a VERIFIED wallet proof says so) above the sending subsidiary's " +
          "proof threshold, the customer's VERIFIED wallet proof (`originatorRef` = its `customerRef`, required then) " +
          'goes as `beneficiaryProof`; without one the transfer waits in AWAITING_PROOF (docs/wallet-proofs.md).',
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
      const key = idempotencyKeyOf(request, 'a header naming this transfer, so a repeat returns it')!;
      const ctx = needTransfers(deps);
      const hybrid = ['1', 'true'].includes((request.query as { hybrid?: string }).hybrid ?? '');
      const { body, plan } = await checkOutgoingRequest(ctx, request.body, { source: 'api', hybrid });
      // Classified by both sides' rules; a Travel Rule transfer missing what its own jurisdiction requires is refused.
      // A repeat of a stored request is not classified again (a price that moved since must not turn the transfer
      // already requested into a 400); startOutgoingTransfer answers it, or refuses a different request under the key.
      const classification = (await ctx.store.exists(key)) ? undefined : await classifyOutgoing(validateDeps(), body);
      const { initial } = await startOutgoingTransfer(
        deps,
        key,
        { body, source: 'api', hybrid },
        plan,
        principalOf(request),
        classification,
      );
      // A new workflow has not run its first task yet: answer with the state it starts in rather than wait for it.
      if (initial) return reply.code(202).send(await withClassification(key, initial));
      return reply.code(200).send(await withClassification(key, await transferState(deps, key)));
    },
  );

  app.get(
    '/v1/transfers/:id',
    {
      config: { roles: access.read },
      schema: {
        tags: ['transfers'],
        summary: 'Status of an outgoing transfer and its history',
        params: Type.Object({ id: Type.String({ pattern: IDEMPOTENCY_KEY.source }) }),
        response: { 200: TransferStateSchema },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const state = await transferState(deps, id);
      return deps.transfers ? withClassification(id, state) : state;
    },
  );

  app.patch(
    '/v1/transfers/:id',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['transfers'],
        summary:
          'Add the blockchain transaction hash once the transfer was broadcast (sent on with tx/update; audited)',
        description:
          "Set once: the same hash again is sent again, another one is 409. 409 too for a transfer the network does not know yet (it must not be broadcast) or that ended other than ACCEPTED; 400 for a hash of the wrong shape for the asset's chain.",
        params: Type.Object({ id: Type.String({ pattern: IDEMPOTENCY_KEY.source }) }),
        body: TxHashBody,
        response: { 200: TransferStateSchema },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const { txHash } = request.body as Static<typeof TxHashBody>;
      const state = await addTxHash({ temporal: deps.temporal, transfers: needTransfers(deps) }, request, {
        id,
        txHash,
        principal: principalOf(request),
      });
      return { ...state, classification: await needTransfers(deps).store.classification(id) };
    },
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
        params: Type.Object({ id: Type.String({ pattern: IDEMPOTENCY_KEY.source }) }),
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
