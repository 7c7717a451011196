/**
 * Pre-flight validation of an outgoing transfer (`POST /v1/transfers/validate`), and the classification
 * `POST /v1/transfers` stores and applies: the amount priced in the own jurisdiction's currency against its threshold
 * (the sending subsidiary's country, SUBSIDIARY_JURISDICTIONS, else FATF), the counterparty's rules (its directory
 * `incorporationCountry`, else FATF) as warnings, and the beneficiary address identified from the group's address
 * registry, then the network's address book, then a beneficiary VASP the request names.
 *
 * An amount that cannot be priced is UNKNOWN, never below the threshold: its personal data must hold every field the
 * own jurisdiction requires of a Travel Rule transfer.
 */
import { findRegistryOwner } from '../address-book/store/registry-owner';
import {
  classifyTransfer,
  missingFields,
  pathCovers,
  requiredFields,
  rulesOrFatf,
  type TransferValidationResult,
  type ValidationIssue,
} from '../jurisdictions';
import type { JurisdictionConfig } from '../jurisdictions/config';
import { isCountryCode } from '../lib/countries';
import { NotFoundError, ValidationError } from '../lib/errors';
import { flattenIvms101, IVMS101_RULES, validateBeneficiary, validateOriginator, type FlatEntry } from '../lib/ivms101';
import { addressOwner, vaspProfile } from '../network/directory';
import type { Pricing } from '../pricing';
import { cached, type TransferContext } from './context';
import { assertOriginatorAllowed } from './plan';
import { assetLabel, type ValidateTransferBody } from './request';
import { beneficiaryWallet, isProvenWallet, ownershipProofRequired, usableProof } from '../wallet-proofs/requirement';

export interface ValidateDeps {
  ctx: TransferContext;
  pricing: Pricing;
  jurisdictions: JurisdictionConfig;
}

/** The classification as stored with a transfer: the validation's answer and which personal data is sent. */
export interface StoredClassification extends TransferValidationResult {
  /**
   * `all`: the personal data as given; else the IVMS101 paths whose leaves are sent (BELOW_THRESHOLD and
   * NON_CUSTODIAL transfers send only what the rules of either side require at the amount).
   */
  personalData: 'all' | string[];
  /**
   * A self-hosted beneficiary wallet (UNHOSTED) whose ownership proof the sending subsidiary's jurisdiction asks for
   * at the amount, whether or not one exists yet: the send step then sends the given or VERIFIED proof, or waits
   * (AWAITING_PROOF) for one. Absent for other transfers and those classified before proofs were required.
   */
  ownershipProofRequired?: boolean;
  /**
   * The self-hosted beneficiary wallet (UNHOSTED only), as the proofs store spells it: the console finds its ownership
   * proofs by it. The address alone, as the wallet-proofs API shows it; the request itself stays sealed.
   */
  beneficiaryWallet?: { asset: string; address: string };
}

const MISSING_OWN = 'MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION';
/** The largest 256-bit integer has 78 digits: a longer amount is no amount a chain can carry. */
const MAX_AMOUNT_DIGITS = 78;
const COUNTRY_LEAF = /\.(country|countryOfResidence|countryOfIssue|countryOfRegistration)$/;

/** Bad input the classification cannot work with: each a ValidationError naming the field. */
export function assertClassifiable(body: ValidateTransferBody, pricing: Pricing): void {
  // The personal data may be partial (a missing field is what the answer reports), never malformed; a party given
  // has its persons.
  for (const [party, check] of [
    ['originator', validateOriginator],
    ['beneficiary', validateBeneficiary],
  ] as const) {
    if (body[party] === undefined) continue;
    const persons = `${party}.${party}Persons`;
    const issue = check(body[party], party).find(
      (i) => !(i.rule === IVMS101_RULES.required || i.rule === IVMS101_RULES.c1) || i.field === persons,
    );
    if (issue) throw new ValidationError(issue.field, issue.rule);
  }
  if (body.transactionAmount.length > MAX_AMOUNT_DIGITS)
    throw new ValidationError(
      'transactionAmount',
      `must be at most ${MAX_AMOUNT_DIGITS} digits of base units (the largest 256-bit integer)`,
    );
  const asset = body.transactionAsset;
  if (typeof asset === 'string' && !body.customAssetPrice && pricing.decimals(asset) === undefined)
    throw new ValidationError(
      'transactionAsset',
      'is not an asset of the price table; give customAssetPrice {priceUSD, decimals} to price it',
    );
  for (const leaf of personalLeaves(body)) {
    if (COUNTRY_LEAF.test(leaf.key) && leaf.value !== 'XX' && !isCountryCode(leaf.value))
      throw new ValidationError(leaf.key, 'must be an ISO 3166-1 alpha-2 country code (or XX for unknown)');
  }
}

/** The personal data as far as given, as {originator?, beneficiary?}. */
function personalData(body: Pick<ValidateTransferBody, 'originator' | 'beneficiary'>): Record<string, unknown> {
  return {
    ...(body.originator !== undefined && { originator: body.originator }),
    ...(body.beneficiary !== undefined && { beneficiary: body.beneficiary }),
  };
}

function personalLeaves(body: ValidateTransferBody): FlatEntry[] {
  const out: FlatEntry[] = [];
  for (const [party, tree] of Object.entries(personalData(body))) {
    try {
      out.push(...flattenIvms101({ [party]: tree }));
    } catch (e) {
      if (e instanceof ValidationError) throw e;
      throw new ValidationError(party, 'is not IVMS101-shaped personal data');
    }
  }
  return out;
}

interface DirectoryEntry {
  name?: string;
  country?: string;
}

/** A VASP's name and incorporation country from the directory (cached), or undefined when it is not there. */
async function directoryEntry(ctx: TransferContext, vaspDid: string): Promise<DirectoryEntry | undefined> {
  const json = await cached(ctx, `profile|${vaspDid}`, async () => {
    try {
      const profile = await vaspProfile(ctx.network, vaspDid);
      const country = profile.incorporationCountry;
      return JSON.stringify({
        ...(typeof profile.name === 'string' && { name: profile.name }),
        ...(typeof country === 'string' && isCountryCode(country) && { country }),
      });
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  });
  return json === undefined ? undefined : (JSON.parse(json) as DirectoryEntry);
}

interface IdentifiedAddress {
  type: TransferValidationResult['beneficiaryAddressType'];
  source: TransferValidationResult['addressSource'];
  beneficiaryVaspDid?: string;
  /** The customer (`originatorRef`) has a VERIFIED, unexpired proof of the wallet. */
  customerProof?: boolean;
}

/**
 * The beneficiary address: a subsidiary's in the group's registry, else an address the network's address book gives an
 * owner, else the beneficiary VASP the request names (known to the directory); with none of them it is a self-hosted
 * wallet (UNHOSTED) when the request says so (`isNonCustodial`), carries its ownership proof, or the wallet has a
 * VERIFIED proof in the store (anyone's: a proven wallet is self-hosted whoever proved it), and UNKNOWN otherwise.
 */
async function identifyAddress(ctx: TransferContext, body: ValidateTransferBody): Promise<IdentifiedAddress> {
  const destination = body.transactionBlockchainInfo.destination;
  const named = body.beneficiaryVASPdid;
  const asset = assetLabel(body.transactionAsset);
  // The three lookups run side by side (the withdrawal screen waits for the answer); the address book's and the
  // directory's answers are cached, and a registry hit discards them.
  const ownerLookup = cached(ctx, `owner|${body.originatorVASPdid}|${asset}|${destination}`, async () => {
    try {
      return await addressOwner(ctx.network, { address: destination, vaspDid: body.originatorVASPdid, asset });
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  });
  const namedLookup = named ? directoryEntry(ctx, named) : Promise.resolve(undefined);
  const wallet = beneficiaryWallet(body);
  const now = new Date();
  const proofLookup = Promise.all([
    usableProof(ctx.pool, wallet, body.originatorRef, now).then((p) => p !== undefined),
    isProvenWallet(ctx.pool, wallet, now),
  ]);
  ownerLookup.catch(() => undefined);
  namedLookup.catch(() => undefined);
  proofLookup.catch(() => undefined);
  if (ctx.group.subsidiaryDids.length > 0) {
    const inGroup = await findRegistryOwner(ctx.pool, destination, ctx.group.subsidiaryDids);
    if (inGroup) return { type: 'HOSTED', source: 'GROUP_REGISTRY', beneficiaryVaspDid: named ?? inGroup };
  }
  const owner = await ownerLookup;
  if (owner) return { type: 'HOSTED', source: 'DIRECTORY', beneficiaryVaspDid: named ?? owner };
  if (named) {
    if (!(await namedLookup)) throw new ValidationError('beneficiaryVASPdid', 'is not a VASP in the network directory');
    return { type: 'HOSTED', source: 'DIRECTORY', beneficiaryVaspDid: named };
  }
  const [customerProof, proven] = await proofLookup;
  const selfHosted = body.beneficiaryProof !== undefined || body.isNonCustodial === true || proven;
  return { type: selfHosted ? 'UNHOSTED' : 'UNKNOWN', source: 'UNKNOWN', customerProof };
}

const issueText = (i: ValidationIssue) => `${i.code}: ${i.field ?? i.message}`;

/** `POST /v1/transfers/validate`: the transfer's classification by the rules of both sides, nothing stored or sent. */
export async function validateTransfer(
  deps: ValidateDeps,
  body: ValidateTransferBody,
): Promise<TransferValidationResult> {
  return (await classifyWithProof(deps, body)).result;
}

/** The validation, and whether the own jurisdiction asks for an ownership proof of a self-hosted wallet. */
async function classifyWithProof(
  deps: ValidateDeps,
  body: ValidateTransferBody,
): Promise<{ result: TransferValidationResult; ownershipProofRequired?: boolean }> {
  const { ctx, pricing } = deps;
  assertClassifiable(body, pricing);
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  const address = await identifyAddress(ctx, body);
  const beneficiary = address.beneficiaryVaspDid;
  const entry = beneficiary ? await directoryEntry(ctx, beneficiary) : undefined;
  const ownCountry = deps.jurisdictions.subsidiaryCountries[body.originatorVASPdid];
  const counterpartyCountry = beneficiary
    ? (deps.jurisdictions.subsidiaryCountries[beneficiary] ?? entry?.country)
    : undefined;
  const ivms101 = personalData(body);
  const classification = await classifyTransfer(
    {
      ownCountry,
      counterpartyCountry,
      asset: assetLabel(body.transactionAsset),
      amount: body.transactionAmount,
      customAssetPrice: body.customAssetPrice,
      beneficiaryAddressType: address.type,
      ivms101,
      hasOwnershipProof: body.beneficiaryProof !== undefined || address.customerProof === true,
    },
    pricing,
  );
  const errors = [...classification.errors];
  if (classification.type === 'UNKNOWN') {
    // Unpriceable is not below the threshold: the fields of a Travel Rule transfer are required.
    const own = rulesOrFatf(ownCountry);
    for (const field of missingFields(own, true, ivms101))
      errors.push({
        code: MISSING_OWN,
        message: `${own.name} requires ${field} (the amount could not be priced, so a Travel Rule transfer's fields are required)`,
        field,
      });
  }
  const name = body.beneficiaryVASPname ?? entry?.name;
  const price = classification.price;
  const proofRequired =
    address.type === 'UNHOSTED'
      ? ownershipProofRequired(rulesOrFatf(ownCountry), 'value' in price ? price.value : undefined)
      : undefined;
  const result: TransferValidationResult = {
    isValid: errors.length === 0,
    type: classification.type,
    beneficiaryAddressType: address.type,
    addressSource: address.source,
    ...(name !== undefined && { beneficiaryVASPname: name }),
    errors: errors.map(issueText),
    warnings: classification.warnings.map(issueText),
    details: { errors, warnings: classification.warnings },
    thresholds: classification.thresholds,
    price: classification.price,
  };
  return { result, ...(proofRequired !== undefined && { ownershipProofRequired: proofRequired }) };
}

/**
 * `POST /v1/transfers`' classification: the validation, and a TRAVELRULE (or UNKNOWN) transfer missing fields its own
 * jurisdiction requires refused with a ValidationError listing them (`fields`), before anything is stored or started.
 */
export async function classifyOutgoing(deps: ValidateDeps, body: ValidateTransferBody): Promise<StoredClassification> {
  const { result, ownershipProofRequired: proofRequired } = await classifyWithProof(deps, body);
  const missing = result.details.errors.filter((e) => e.code === MISSING_OWN && e.field).map((e) => e.field!);
  if ((result.type === 'TRAVELRULE' || result.type === 'UNKNOWN') && missing.length > 0) {
    const own = result.thresholds.own.jurisdiction;
    throw new ValidationError(
      missing[0] as string,
      `is required by the sending VASP's jurisdiction (${own}) for a ${result.type === 'UNKNOWN' ? 'transfer whose amount could not be priced' : 'Travel Rule transfer'}; missing: ${missing.join(', ')}`,
      { fields: missing, transferType: result.type },
    );
  }
  // The proof is the customer's (originatorRef): without a reference no stored proof can be matched to the transfer.
  if (proofRequired && body.beneficiaryProof === undefined && body.originatorRef === undefined)
    throw new ValidationError(
      'originatorRef',
      `is required for a transfer to a self-hosted wallet that needs an ownership proof (${result.thresholds.own.jurisdiction}): it names the customer whose VERIFIED wallet proof is sent (or give beneficiaryProof)`,
    );
  return {
    ...result,
    personalData: personalDataSent(result),
    ...(proofRequired !== undefined && { ownershipProofRequired: proofRequired }),
    ...(result.beneficiaryAddressType === 'UNHOSTED' && { beneficiaryWallet: beneficiaryWallet(body) }),
  };
}

/**
 * Which personal data a transfer sends: all of it for TRAVELRULE and UNKNOWN; for BELOW_THRESHOLD and NON_CUSTODIAL
 * the fields either side's rules require at the amount (all, when the counterparty's side could not be priced).
 */
function personalDataSent(result: TransferValidationResult): StoredClassification['personalData'] {
  if (result.type === 'TRAVELRULE' || result.type === 'UNKNOWN') return 'all';
  const { own, counterparty } = result.thresholds;
  if (own.amount === undefined || counterparty.amount === undefined) return 'all';
  return [
    ...new Set([
      ...requiredFields(rulesOrFatf(own.jurisdiction), own.amount),
      ...requiredFields(rulesOrFatf(counterparty.jurisdiction), counterparty.amount),
    ]),
  ];
}

/** The personal data's leaves a stored classification lets go out (all of them without one). */
export function leavesToSend(leaves: FlatEntry[], classification: StoredClassification | undefined): FlatEntry[] {
  const paths = classification?.personalData;
  if (!paths || paths === 'all') return leaves;
  return leaves.filter((leaf) => paths.some((path) => pathCovers(path, leaf.key)));
}
