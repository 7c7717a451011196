/**
 * How the network classifies a transfer (`POST /tx/validate/full`, `POST /tx/validate`, and the type `tx/create`
 * stores): the amount priced in the originator VASP's jurisdiction's currency against its threshold; a wallet the
 * customer holds (UNHOSTED) is NON_CUSTODIAL; an amount it cannot price is UNKNOWN. Fields the own jurisdiction
 * requires and the personal data lacks are errors, the counterparty's are warnings.
 *
 * The jurisdictions are the directory's `incorporationCountry` of each VASP (a subsidiary without one: its gateway's),
 * else FATF. The beneficiary's address is identified from the address book (HOSTED, source ADDRESS_HASH), else from a
 * beneficiary VASP the request names (HOSTED), else a customer's ownership proof with no VASP in sight marks it UNHOSTED;
 * otherwise it is UNKNOWN.
 */
import type { Pool } from 'pg';
import { flattenIvms101 } from '../../lib/ivms101';
import { findOwners, pickOwner } from '../address-book';
import { simpleVasp } from '../directory/profiles';
import { gatewayOf, vaspName } from '../directory/store';
import { price, rulesOrFatf, type CustomAssetPrice, type Priced, type Rules } from './table';

export type TransactionType = 'BELOW_THRESHOLD' | 'NON_CUSTODIAL' | 'TRAVELRULE' | 'UNKNOWN';
export type AddressType = 'HOSTED' | 'UNHOSTED' | 'UNKNOWN';
export type AddressSource = 'ADDRESS_HASH' | 'UNKNOWN';

export interface TransferFacts {
  originatorVASPdid: string;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  /** The asset's text (symbol, CAIP-19 id or coingeckoId@network): what the address book and the prices match. */
  asset: string;
  amount: string;
  decimals?: number;
  customAssetPrice?: CustomAssetPrice;
  destination: string;
  /** The IVMS101 paths the request carries (present(), below). */
  present: string[];
  hasBeneficiaryProof: boolean;
  /** Consider the beneficiary's jurisdiction too when deciding TRAVELRULE. */
  travelRuleBehavior?: boolean;
  /** Which party's fields to check (ValidatePartyFields); default ALL. */
  party?: 'BENEFICIARY' | 'ORIGINATOR' | 'ALL';
}

export interface Issue {
  code: string;
  /** The IVMS101 path concerned (or `beneficiaryProof`). */
  field?: string;
  detail?: string;
}

export interface SideRules {
  rules: Rules;
  priced: Priced;
}

export interface Classification {
  type: TransactionType;
  beneficiaryAddressType: AddressType;
  addressSource: AddressSource;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  errors: Issue[];
  warnings: Issue[];
  own: SideRules;
  counterparty: SideRules;
  /** What the own jurisdiction requires at this amount (for the deprecated validate's flags). */
  required: string[];
  proofRequired: boolean;
}

/** A VASP's incorporationCountry, else its gateway's; undefined when neither has one. */
async function countryOf(pool: Pool, did: string | undefined): Promise<string | undefined> {
  if (!did) return undefined;
  const own = await simpleVasp(pool, did, ['incorporationCountry']);
  const country = own?.incorporationCountry;
  if (typeof country === 'string' && country) return country;
  const gateway = own ? await gatewayOf(pool, did) : null;
  if (!gateway) return undefined;
  const parent = (await simpleVasp(pool, gateway, ['incorporationCountry']))?.incorporationCountry;
  return typeof parent === 'string' && parent ? parent : undefined;
}

/** The paths of the personal data's leaves (`originator…`, `beneficiary…`); malformed data has none. */
export function present(parties: { originator?: unknown; beneficiary?: unknown; pii?: unknown }): string[] {
  const out: string[] = [];
  for (const tree of [{ originator: parties.originator, beneficiary: parties.beneficiary }, parties.pii]) {
    if (!tree || typeof tree !== 'object') continue;
    try {
      out.push(...flattenIvms101(tree).map((e) => e.key));
    } catch {
      // Its own validation reports malformed data; here it simply carries nothing.
    }
  }
  return out;
}

/** A `naturalPerson` path is also met by the same `legalPerson` path. */
function isPresent(path: string, keys: string[]): boolean {
  const alternatives = [path, path.replace('.naturalPerson.', '.legalPerson.')];
  return keys.some((key) => alternatives.some((p) => key === p || key.startsWith(`${p}.`) || key.startsWith(`${p}[`)));
}

const valueOf = (p: Priced) => ('value' in p ? p.value : undefined);

function requiredAt(rules: Rules, value: number, party: TransferFacts['party']): string[] {
  const fields = value >= rules.threshold ? rules.fieldsAboveThreshold : rules.fieldsBelowThreshold;
  return fields.filter(
    (f) =>
      !party ||
      party === 'ALL' ||
      (party === 'BENEFICIARY' ? f.startsWith('beneficiary.') : f.startsWith('originator.')),
  );
}

export async function classify(pool: Pool, facts: TransferFacts): Promise<Classification> {
  const assetForBook = facts.asset.includes('@') ? '' : facts.asset;
  const owner = pickOwner(await findOwners(pool, assetForBook, facts.destination));
  const beneficiaryVASPdid = facts.beneficiaryVASPdid ?? owner?.vaspDid;
  const named = beneficiaryVASPdid ? await vaspName(pool, beneficiaryVASPdid) : undefined;
  const beneficiaryVASPname =
    facts.beneficiaryVASPname ?? (owner?.vaspDid === beneficiaryVASPdid ? owner?.vaspName : undefined) ?? named;
  let beneficiaryAddressType: AddressType = 'UNKNOWN';
  let addressSource: AddressSource = 'UNKNOWN';
  if (owner) {
    beneficiaryAddressType = 'HOSTED';
    addressSource = 'ADDRESS_HASH';
  } else if (beneficiaryVASPdid) beneficiaryAddressType = 'HOSTED';
  else if (facts.hasBeneficiaryProof) beneficiaryAddressType = 'UNHOSTED';

  const ownRules = rulesOrFatf(await countryOf(pool, facts.originatorVASPdid));
  const counterpartyRules = rulesOrFatf(await countryOf(pool, beneficiaryVASPdid));
  const priceIn = (currency: string) =>
    price(facts.asset, facts.amount, currency, { customAssetPrice: facts.customAssetPrice, decimals: facts.decimals });
  const ownPriced = priceIn(ownRules.currency);
  const counterpartyPriced =
    counterpartyRules.currency === ownRules.currency ? ownPriced : priceIn(counterpartyRules.currency);
  const base = {
    beneficiaryAddressType,
    addressSource,
    ...(beneficiaryVASPdid && { beneficiaryVASPdid }),
    ...(beneficiaryVASPname !== undefined && { beneficiaryVASPname }),
    own: { rules: ownRules, priced: ownPriced },
    counterparty: { rules: counterpartyRules, priced: counterpartyPriced },
  };

  const ownValue = valueOf(ownPriced);
  if (ownValue === undefined) {
    const reason = 'unknown' in ownPriced ? ownPriced.unknown : '';
    return {
      ...base,
      type: 'UNKNOWN',
      errors: [{ code: 'PRICE_UNKNOWN', detail: reason }],
      warnings: [],
      required: [],
      proofRequired: false,
    };
  }
  const required = requiredAt(ownRules, ownValue, facts.party);
  const errors: Issue[] = required
    .filter((f) => !isPresent(f, facts.present))
    .map((field) => ({ code: 'MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION', field }));
  const counterpartyValue = valueOf(counterpartyPriced);
  const warnings: Issue[] =
    counterpartyValue === undefined
      ? [{ code: 'PRICE_UNKNOWN', detail: "the counterparty's threshold was not checked" }]
      : requiredAt(counterpartyRules, counterpartyValue, facts.party)
          .filter((f) => !isPresent(f, facts.present))
          .map((field) => ({ code: 'MISSING_FIELDS_REQUIRED_BY_COUNTERPARTY_JURISDICTION', field }));

  const above =
    ownValue >= ownRules.threshold ||
    (facts.travelRuleBehavior === true &&
      counterpartyValue !== undefined &&
      counterpartyValue >= counterpartyRules.threshold);
  let type: TransactionType = above ? 'TRAVELRULE' : 'BELOW_THRESHOLD';
  if (beneficiaryAddressType === 'UNHOSTED') type = 'NON_CUSTODIAL';
  // A wallet no VASP claims may be the customer's own: the own jurisdiction's proof rule applies to it.
  const proof = ownRules.selfHostedProof;
  const proofRequired = beneficiaryAddressType !== 'HOSTED' && proof.required && ownValue > (proof.aboveAmount ?? 0);
  if (proofRequired && !facts.hasBeneficiaryProof)
    errors.push({ code: 'OWNERSHIP_PROOF_REQUIRED', field: 'beneficiaryProof' });
  return { ...base, type, errors, warnings, required, proofRequired };
}

/** An issue as the network's answers carry it: one string naming the code and the field. */
export const issueText = (i: Issue): string => [i.code, i.field, i.detail].filter((s): s is string => !!s).join(': ');
