/**
 * The outgoing transfer request: the network's `POST /tx/create` body (network-api-facts.md §1) with plain IVMS101
 * `originator` and `beneficiary`, which this system encrypts. The same shape serves the internal API
 * (`POST /v1/transfers`) and the agent-compatible `POST /tx/create`, so a caller moving from the agent changes nothing.
 */
import { Type, type Static } from 'typebox';
import { ValidationError } from '../../lib/errors';
import { assertValidBeneficiary, assertValidOriginator, lossyLeaves } from '../../lib/ivms101';
import { assertValid } from '../../lib/validation';

const Did = Type.String({ pattern: '^did:[a-zA-Z0-9]+:.+$', description: 'a DID, e.g. did:ethr:0x…' });

/** The network's asset forms: a symbol, `{caip19}`, or `{coingeckoId, network}`. */
export const TransactionAsset = Type.Union([
  Type.String({ minLength: 1, maxLength: 64 }),
  Type.Object({ caip19: Type.String({ minLength: 3 }) }, { additionalProperties: false }),
  Type.Object({ coingeckoId: Type.String({ minLength: 1 }), network: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
]);

const Ivms101Party = (what: string) =>
  Type.Object({}, { additionalProperties: true, description: `IVMS101 ${what} (plain; validated against the IVMS101 schema and encrypted here)` });

export const OutgoingTransferBody = Type.Object(
  {
    transactionRef: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' })),
    transactionAsset: TransactionAsset,
    transactionAmount: Type.String({ pattern: '^0*[1-9][0-9]*$', description: 'amount in base units (integer string, not zero)' }),
    transactionAssetDecimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 36 })),
    originatorVASPdid: Did,
    beneficiaryVASPdid: Type.Optional(Did),
    beneficiaryVASPname: Type.Optional(Type.String()),
    originatorDid: Type.Optional(Did),
    beneficiaryDid: Type.Optional(Did),
    originatorRef: Type.Optional(Type.String()),
    beneficiaryRef: Type.Optional(Type.String()),
    transactionBlockchainInfo: Type.Object(
      {
        txHash: Type.Optional(Type.String()),
        origin: Type.Optional(Type.String()),
        destination: Type.String({ minLength: 1 }),
      },
      { additionalProperties: false },
    ),
    originator: Ivms101Party('Originator {originatorPersons, accountNumber?}'),
    beneficiary: Ivms101Party('Beneficiary {beneficiaryPersons, accountNumber?}'),
    notificationEmail: Type.Optional(Type.String()),
    skipBeneficiaryDataValidation: Type.Optional(Type.Boolean()),
    travelRuleBehavior: Type.Optional(Type.Boolean()),
    blockchainTransactionTimestamp: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type OutgoingTransferBody = Static<typeof OutgoingTransferBody>;

/** The request as stored: the body plus how it came in. */
export interface OutgoingRequest {
  body: OutgoingTransferBody;
  /** `api` (POST /v1/transfers) or `agent` (POST /tx/create). */
  source: 'api' | 'agent';
  /** Hybrid mode: also encrypt for the service-managed (escrow) key. */
  hybrid: boolean;
}

/** Whole-body validation with the IVMS101 rules; throws a ValidationError naming the first failing field. */
export function validateOutgoingBody(body: unknown): asserts body is OutgoingTransferBody {
  assertValid(OutgoingTransferBody, body);
  assertValidOriginator(body.originator, 'originator');
  assertValidBeneficiary(body.beneficiary, 'beneficiary');
  const [lossy] = [...lossyLeaves(body.originator, 'originator'), ...lossyLeaves(body.beneficiary, 'beneficiary')];
  if (lossy) throw new ValidationError(lossy, "must be a string: the network's personal-data format carries strings only");
}

/** The asset as a search attribute: the symbol, or the CAIP-19 / coingecko id. */
export function assetLabel(asset: OutgoingTransferBody['transactionAsset']): string {
  if (typeof asset === 'string') return asset;
  if ('caip19' in asset) return asset.caip19;
  return `${asset.coingeckoId}@${asset.network}`;
}
