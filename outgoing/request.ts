/**
 * The outgoing transfer request: the network's `POST /tx/create` body with plain IVMS101
 * `originator` and `beneficiary`, which this system encrypts. The same shape serves the internal API
 * (`POST /v1/transfers`) and the agent-compatible `POST /tx/create`, so a caller moving from the agent changes nothing.
 */
import { Type, type Static } from 'typebox';
import { ValidationError } from '../lib/errors';
import { assertValidBeneficiary, assertValidOriginator, flattenIvms101, lossyLeaves } from '../lib/ivms101';
import { assertValid } from '../lib/validation';
import { FreeText } from '../lib/text';

const Did = Type.String({
  pattern: '^did:[a-zA-Z0-9]+:[A-Za-z0-9._:%-]+$',
  maxLength: 512,
  description: 'a DID, e.g. did:ethr:0x…',
});

/** The network refuses longer text fields and amounts (as the sandbox does: sandbox/transactions/model.ts). */
const NETWORK_TEXT_MAX = 1024;
const NETWORK_AMOUNT_DIGITS = 80;
/**
 * `/pii/put` takes at most this many items (sandbox/pii-store), one per IVMS101 leaf. Each item is one leaf of at most
 * 100 characters (the IVMS101 schema's limits) encrypted, far under the service's 256 KiB per item.
 */
export const MAX_PII_ITEMS = 5_000;

const NetworkText = (options: { minLength?: number; description?: string } = {}) =>
  FreeText({ maxLength: NETWORK_TEXT_MAX, ...options });

/** The network's asset forms: a symbol, `{caip19}`, or `{coingeckoId, network}`. */
export const TransactionAsset = Type.Union([
  FreeText({ minLength: 1, maxLength: 64 }),
  Type.Object({ caip19: FreeText({ minLength: 3, maxLength: 256 }) }, { additionalProperties: false }),
  Type.Object(
    { coingeckoId: FreeText({ minLength: 1, maxLength: 128 }), network: FreeText({ minLength: 1, maxLength: 128 }) },
    { additionalProperties: false },
  ),
]);

const Ivms101Party = (what: string) =>
  Type.Object(
    {},
    {
      additionalProperties: true,
      description: `IVMS101 ${what} (plain; validated against the IVMS101 schema and encrypted here)`,
    },
  );

/** The network's `CustomAssetPrice`: the caller's price of one whole unit in USD, and the asset's decimals. */
export const CustomAssetPriceSchema = Type.Object(
  {
    priceUSD: Type.Number({ minimum: 0, description: 'price of one whole unit in USD (finite, not negative)' }),
    decimals: Type.Integer({ minimum: 0, maximum: 36 }),
  },
  { additionalProperties: false },
);

const transferProperties = {
  transactionRef: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' })),
  transactionAsset: TransactionAsset,
  transactionAmount: Type.String({
    pattern: '^0*[1-9][0-9]*$',
    maxLength: NETWORK_AMOUNT_DIGITS,
    description: `amount in base units (integer string, not zero, at most ${NETWORK_AMOUNT_DIGITS} digits)`,
  }),
  transactionAssetDecimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 36 })),
  originatorVASPdid: Did,
  beneficiaryVASPdid: Type.Optional(Did),
  beneficiaryVASPname: Type.Optional(NetworkText()),
  originatorDid: Type.Optional(Did),
  beneficiaryDid: Type.Optional(Did),
  originatorRef: Type.Optional(NetworkText()),
  beneficiaryRef: Type.Optional(NetworkText()),
  transactionBlockchainInfo: Type.Object(
    {
      txHash: Type.Optional(NetworkText()),
      origin: Type.Optional(NetworkText()),
      destination: NetworkText({ minLength: 1 }),
    },
    { additionalProperties: false },
  ),
  originator: Ivms101Party('Originator {originatorPersons, accountNumber?}'),
  beneficiary: Ivms101Party('Beneficiary {beneficiaryPersons, accountNumber?}'),
  notificationEmail: Type.Optional(NetworkText()),
  skipBeneficiaryDataValidation: Type.Optional(Type.Boolean()),
  travelRuleBehavior: Type.Optional(Type.Boolean()),
  blockchainTransactionTimestamp: Type.Optional(NetworkText()),
  customAssetPrice: Type.Optional(CustomAssetPriceSchema),
  isNonCustodial: Type.Optional(
    Type.Boolean({
      description:
        "The network's flag: the beneficiary address is a self-hosted (non-custodial) wallet. With no VASP owning the address it makes the transfer NON_CUSTODIAL; where the sending subsidiary's jurisdiction asks for an ownership proof at the amount and none is given or VERIFIED for the customer (`originatorRef`), the transfer waits in AWAITING_PROOF. Sent to the network as given",
    }),
  ),
  beneficiaryProof: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The network's OwnershipProof of a self-hosted beneficiary wallet (sent to the network as given); with no VASP owning the address it makes the transfer NON_CUSTODIAL. Without it, a VERIFIED wallet proof of the customer (`originatorRef`, POST /v1/wallet-proofs) is sent in this shape",
      },
    ),
  ),
};

export const OutgoingTransferBody = Type.Object(transferProperties, { additionalProperties: false });
export type OutgoingTransferBody = Static<typeof OutgoingTransferBody>;

/**
 * `POST /v1/transfers/validate`'s body: the same as `POST /v1/transfers`, with the personal data optional and partial
 * (the withdrawal screen asks while the customer types).
 */
export const ValidateTransferBody = Type.Object(
  {
    ...transferProperties,
    originator: Type.Optional(Ivms101Party('Originator {originatorPersons, accountNumber?}, possibly partial')),
    beneficiary: Type.Optional(Ivms101Party('Beneficiary {beneficiaryPersons, accountNumber?}, possibly partial')),
  },
  { additionalProperties: false },
);
export type ValidateTransferBody = Static<typeof ValidateTransferBody>;

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
  if (lossy)
    throw new ValidationError(lossy, "must be a string: the network's personal-data format carries strings only");
  const asset = body.transactionAsset;
  const assetParts: [string, string][] =
    typeof asset === 'string'
      ? [['transactionAsset', asset]]
      : Object.entries(asset).map(([k, v]) => [`transactionAsset.${k}`, String(v)]);
  for (const [field, value] of assetParts) {
    if (value.trim() !== value || !value)
      throw new ValidationError(field, 'must not be blank or begin or end with spaces');
  }
  const leaves = flattenIvms101({ originator: body.originator, beneficiary: body.beneficiary }).length;
  if (leaves > MAX_PII_ITEMS) {
    throw new ValidationError(
      '(body)',
      `holds ${leaves} personal-data values in originator and beneficiary; the network stores at most ${MAX_PII_ITEMS} per transfer`,
    );
  }
}

/** The asset as a search attribute: the symbol, or the CAIP-19 / coingecko id. */
export function assetLabel(asset: OutgoingTransferBody['transactionAsset']): string {
  if (typeof asset === 'string') return asset;
  if ('caip19' in asset) return asset.caip19;
  return `${asset.coingeckoId}@${asset.network}`;
}
