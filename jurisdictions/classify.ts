/**
 * Classifies a transfer as the network's `POST /tx/validate/full` does: the amount priced in the own jurisdiction's
 * currency against its threshold, a self-hosted beneficiary wallet as NON_CUSTODIAL, an unpriceable amount as UNKNOWN.
 * Fields the own jurisdiction requires and the personal data lacks are errors; the counterparty's are warnings.
 */
import { flattenIvms101 } from '../lib/ivms101';
import type { Pricing } from '../pricing';
import { isPriced, type CustomAssetPrice, type PriceResult } from '../pricing/types';
import { jurisdictionTable, rulesOrFatf, type JurisdictionTable } from './rules';
import type {
  AddressType,
  AppliedThreshold,
  Classification,
  JurisdictionRules,
  TransferType,
  ValidationIssue,
} from './types';

export interface TransferFacts {
  /** The sending subsidiary's country (configuration); none: FATF. */
  ownCountry?: string;
  /** The counterparty's `incorporationCountry` from the directory; none: FATF. */
  counterpartyCountry?: string;
  asset: string;
  /** Base units. */
  amount: string;
  customAssetPrice?: CustomAssetPrice;
  beneficiaryAddressType: AddressType;
  /** The IVMS101 personal data as far as given (`{originator, beneficiary}`), possibly partial. */
  ivms101?: unknown;
  /** Whether an ownership proof of a self-hosted wallet comes with the transfer. */
  hasOwnershipProof?: boolean;
}

export async function classifyTransfer(
  facts: TransferFacts,
  pricing: Pricing,
  table: JurisdictionTable = jurisdictionTable(),
): Promise<Classification> {
  const own = rulesOrFatf(facts.ownCountry, table);
  const counterparty = rulesOrFatf(facts.counterpartyCountry, table);
  const query = { asset: facts.asset, amount: facts.amount, customAssetPrice: facts.customAssetPrice };
  const ownPrice = await pricing.toFiat({ ...query, currency: own.currency });
  const counterpartyPrice =
    counterparty.currency === own.currency
      ? ownPrice
      : await pricing.toFiat({ ...query, currency: counterparty.currency });
  const thresholds = { own: applied(own, ownPrice), counterparty: applied(counterparty, counterpartyPrice) };

  if (!isPriced(ownPrice)) {
    return {
      type: 'UNKNOWN',
      errors: [{ code: 'PRICE_UNKNOWN', message: `the amount could not be priced: ${ownPrice.unknown}` }],
      warnings: [],
      thresholds,
      price: ownPrice,
    };
  }
  const present = presentFields(facts.ivms101);
  const errors: ValidationIssue[] = missing(own, ownPrice.value, present).map((field) => ({
    code: 'MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION',
    message: `${own.name} requires ${field}`,
    field,
  }));
  const warnings: ValidationIssue[] = isPriced(counterpartyPrice)
    ? missing(counterparty, counterpartyPrice.value, present).map((field) => ({
        code: 'MISSING_FIELDS_REQUIRED_BY_COUNTERPARTY_JURISDICTION',
        message: `${counterparty.name} (the counterparty's) requires ${field}`,
        field,
      }))
    : [
        {
          code: 'PRICE_UNKNOWN',
          message: `the counterparty's threshold was not checked: ${counterpartyPrice.unknown}`,
        },
      ];

  let type: TransferType = ownPrice.value >= own.threshold ? 'TRAVELRULE' : 'BELOW_THRESHOLD';
  if (facts.beneficiaryAddressType === 'UNHOSTED') {
    type = 'NON_CUSTODIAL';
    const proof = own.selfHostedProof;
    if (proof.required && ownPrice.value > (proof.aboveAmount ?? 0) && !facts.hasOwnershipProof)
      errors.push({
        code: 'OWNERSHIP_PROOF_REQUIRED',
        message: `${own.name} requires proof of ownership of a self-hosted wallet above ${proof.aboveAmount ?? 0} ${own.currency}`,
        field: 'beneficiaryProof',
      });
  }
  return { type, errors, warnings, thresholds, price: ownPrice };
}

function applied(rules: JurisdictionRules, price: PriceResult): AppliedThreshold {
  return {
    jurisdiction: rules.countryCode,
    currency: rules.currency,
    threshold: rules.threshold,
    ...(isPriced(price) ? { amount: price.value } : {}),
    source: rules.source,
    confidence: rules.confidence,
  };
}

function missing(rules: JurisdictionRules, value: number, present: string[]): string[] {
  const required = value >= rules.threshold ? rules.fieldsAboveThreshold : rules.fieldsBelowThreshold;
  return required.filter((path) => !isPresent(path, present));
}

/** The flattened leaves' keys of the personal data; malformed data has none (its own validation reports it). */
function presentFields(ivms101: unknown): string[] {
  if (!ivms101 || typeof ivms101 !== 'object') return [];
  try {
    return flattenIvms101(ivms101).map((e) => e.key);
  } catch {
    return [];
  }
}

function isPresent(path: string, keys: string[]): boolean {
  return keys.some((key) => pathCovers(path, key));
}

/** Whether a leaf's key (`beneficiary.beneficiaryPersons[0].naturalPerson.name.nameIdentifier[0]…`) lies under a rule's path. */
export function pathCovers(path: string, key: string): boolean {
  const alternatives = [path, path.replace('.naturalPerson.', '.legalPerson.')];
  return alternatives.some((p) => key === p || key.startsWith(`${p}.`) || key.startsWith(`${p}[`));
}

/** The fields `rules` require (above their threshold, or below it) that the personal data lacks. */
export function missingFields(rules: JurisdictionRules, aboveThreshold: boolean, ivms101: unknown): string[] {
  const present = presentFields(ivms101);
  const required = aboveThreshold ? rules.fieldsAboveThreshold : rules.fieldsBelowThreshold;
  return required.filter((path) => !isPresent(path, present));
}

/** The fields `rules` require at `value` (in their currency). */
export function requiredFields(rules: JurisdictionRules, value: number): string[] {
  return value >= rules.threshold ? rules.fieldsAboveThreshold : rules.fieldsBelowThreshold;
}
