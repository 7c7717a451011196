/**
 * Ownership proofs of self-hosted wallets (wallet-proofs/): operators start them and report what the custody system
 * saw, compliance reviews screenshots and declarations, every role reads. Each proof runs as a workflow
 * (workflows/wallet-proof.ts); the store is what is read.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { FreeText } from '../../../lib/text';
import { SIGNATURE_SCHEMES } from '../../../wallet-proofs/challenge';
import {
  instructionsOf,
  proofOrNotFound,
  startProof,
  storedSpelling,
  type ProofDeps,
} from '../../../wallet-proofs/proofs';
import { listProofs } from '../../../wallet-proofs/store';
import { PROOF_METHODS, PROOF_STATUSES, type ProofStatus, type WalletProof } from '../../../wallet-proofs/types';
import { depositObserved, reviewProof, submitSignature } from '../../wallet-proofs/updates';
import { principalOf } from '../auth/plugin';
import { access } from '../auth/roles';
import { IDEMPOTENCY_KEY, idempotencyKeyOf } from '../idempotency-key';
import { PageOf, pageAnswer, paging, Paging } from './lists';

export type WalletProofRouteDeps = ProofDeps;

const Id = Type.Object({ id: Type.String({ pattern: IDEMPOTENCY_KEY.source }) });
const Nullable = Type.Union([Type.String(), Type.Null()]);

const Proof = Type.Object({
  id: Type.String(),
  customerRef: Type.String(),
  asset: Type.String(),
  address: Type.String(),
  vaspDid: Type.String(),
  method: Type.String({ description: PROOF_METHODS.join(', ') }),
  scheme: Nullable,
  status: Type.String({ description: PROOF_STATUSES.join(', ') }),
  reason: Nullable,
  nonce: Type.String({ description: "the challenge's nonce (32 bytes hex): used once" }),
  challengeExpiresAt: Type.String({ description: 'until when the signature, the deposit or the review may come' }),
  depositAddress: Nullable,
  depositAmount: Type.Union([Type.String(), Type.Null()], { description: 'base units' }),
  evidence: Type.Unknown({
    description:
      'the signature, the deposit (txHash, from, amount, receivedAt: when the API received the report) or the review',
  }),
  createdBy: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  verifiedAt: Nullable,
  expiresAt: Type.Union([Type.String(), Type.Null()], { description: 'until when a VERIFIED proof is reused' }),
  instructions: Type.Optional(
    Type.Unknown({
      description:
        'while PENDING: {challenge: {message | typedData, expiresAt}}, {deposit: {address, amount, asset, deadline}} or {review: {deadline}}',
    }),
  ),
  reused: Type.Optional(Type.Boolean()),
});

const CreateBody = Type.Object(
  {
    customerRef: Type.String({ maxLength: 128, description: 'an opaque customer reference, never a name' }),
    asset: Type.String({ maxLength: 128, description: 'ETH, BTC, a -ERC20 token, a CAIP-19…' }),
    address: Type.String({ maxLength: 128 }),
    method: Type.String({ maxLength: 20, description: PROOF_METHODS.join(', ') }),
    vaspDid: Type.String({ maxLength: 300, description: 'the VASP of the group asking' }),
    scheme: Type.Optional(Type.String({ maxLength: 10, description: SIGNATURE_SCHEMES.join(', ') })),
    nonce: Type.Optional(
      Type.String({ maxLength: 66, description: 'a challenge nonce already shown to the customer; a used one is 400' }),
    ),
  },
  { additionalProperties: false },
);
const SignatureBody = Type.Object(
  { signature: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);
const DepositBody = Type.Object(
  {
    txHash: Type.String({ pattern: '^(0x)?[0-9a-fA-F]{64}$', description: 'the transaction hash (32 bytes hex)' }),
    from: Type.String({ minLength: 1, maxLength: 128 }),
    amount: Type.String({ pattern: '^[0-9]{1,78}$', description: 'base units, digits only (no decimals)' }),
  },
  { additionalProperties: false },
);
const ReviewBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
    reason: FreeText({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(PROOF_STATUSES.map((s) => Type.Literal(s)))),
    customerRef: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:@/-]{1,128}$' })),
    address: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{1,128}$' })),
    ...Paging,
  },
  { additionalProperties: false },
);

const withInstructions = (p: WalletProof) => {
  const instructions = instructionsOf(p);
  return instructions ? { ...p, instructions } : p;
};

export function walletProofRoutes(app: FastifyInstance, deps: WalletProofRouteDeps) {
  app.post(
    '/v1/wallet-proofs',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['wallet proofs'],
        summary: 'Start an ownership proof of a self-hosted wallet (audited), or answer the verified one still valid',
        description:
          'SIGNATURE answers the challenge to sign (message, or EIP-712 typed data) and its expiry; SMALL_DEPOSIT the ' +
          'amount to send from the wallet to the deposit address before the deadline; SCREENSHOT and ' +
          'SELF_DECLARATION wait for a compliance officer. A VERIFIED proof of the same customer, asset and address ' +
          'that has not expired answers 200 instead of starting another; so does a repeat under the same ' +
          '`Idempotency-Key` (optional; it becomes the proof id).',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: CreateBody,
        response: { 200: Proof, 201: Proof },
      },
    },
    async (request, reply) => {
      const started = await startProof(
        deps,
        request.body as Static<typeof CreateBody>,
        principalOf(request),
        idempotencyKeyOf(request),
      );
      const body = { ...withInstructions(started.proof), ...(started.existing ? { reused: true } : {}) };
      return reply.code(started.existing ? 200 : 201).send(body);
    },
  );

  app.get(
    '/v1/wallet-proofs',
    {
      config: { roles: access.read },
      schema: {
        tags: ['wallet proofs'],
        summary: 'Wallet proofs by creation time (newest first by default), filtered by status, customer and address',
        querystring: ListQuery,
        response: { 200: PageOf(Proof) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof ListQuery>;
      const found = await listProofs(
        deps.pool,
        {
          status: q.status as ProofStatus | undefined,
          customerRef: q.customerRef,
          address: q.address && storedSpelling(q.address),
        },
        paging(q),
      );
      return pageAnswer({ ...found, rows: found.rows.map(withInstructions) });
    },
  );

  app.get(
    '/v1/wallet-proofs/:id',
    {
      config: { roles: access.read },
      schema: { tags: ['wallet proofs'], summary: 'One wallet proof', params: Id, response: { 200: Proof } },
    },
    async (request) => withInstructions(await proofOrNotFound(deps.pool, (request.params as Static<typeof Id>).id)),
  );

  app.post(
    '/v1/wallet-proofs/:id/signature',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['wallet proofs'],
        summary: "The wallet's signature over the challenge: VERIFIED, or REJECTED with the reason",
        description:
          'A malformed signature (wrong length, not hex or base64) answers 400 and the proof stays PENDING; a proof ' +
          'no longer pending or expired answers 409.',
        params: Id,
        body: SignatureBody,
        response: { 200: Proof },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof Id>;
      const { signature } = request.body as Static<typeof SignatureBody>;
      return withInstructions(await submitSignature(deps, id, signature));
    },
  );

  app.post(
    '/v1/wallet-proofs/:id/deposit-observed',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['wallet proofs'],
        summary: 'A deposit the custody system saw for a small-deposit test',
        description:
          'From the wallet and of exactly the test amount: VERIFIED. Otherwise the proof stays PENDING with the reason ' +
          '(a stray deposit must not end a test the customer can still pass before the deadline).',
        params: Id,
        body: DepositBody,
        response: { 200: Proof },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof Id>;
      return withInstructions(await depositObserved(deps, id, request.body as Static<typeof DepositBody>));
    },
  );

  app.post(
    '/v1/wallet-proofs/:id/review',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['wallet proofs'],
        summary: 'Approve or reject a screenshot or self-declaration (compliance; audited)',
        params: Id,
        body: ReviewBody,
        response: { 200: Proof },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof Id>;
      return withInstructions(
        await reviewProof(deps, id, request.body as Static<typeof ReviewBody>, principalOf(request)),
      );
    },
  );
}
