/** Workflow-safe types of jurisdictions: the rules as data and a transfer's classification by them. */
import type { FiatAmount } from '../pricing/types';

export type Confidence = 'primary' | 'notabene' | 'secondary';

export interface SelfHostedProofRule {
  required: boolean;
  /** In the jurisdiction's currency; null: at any amount (when required). */
  aboveAmount: number | null;
  source: string;
  confidence: Confidence;
  notes?: string;
}

export interface JurisdictionRules {
  /** ISO 3166-1 alpha-2, or `EU` (with `countryCodes`) or `FATF`. */
  countryCode: string;
  countryCodes?: string[];
  name: string;
  currency: string;
  /** A transfer worth this much or more (in `currency`) is a Travel Rule transfer. */
  threshold: number;
  source: string;
  confidence: Confidence;
  /** IVMS101 paths; a `naturalPerson` path is also met by the same `legalPerson` path. */
  fieldsAboveThreshold: string[];
  fieldsBelowThreshold: string[];
  selfHostedProof: SelfHostedProofRule;
  notes?: string;
}

export type TransferType = 'BELOW_THRESHOLD' | 'NON_CUSTODIAL' | 'TRAVELRULE' | 'UNKNOWN';
export type AddressType = 'HOSTED' | 'UNHOSTED' | 'UNKNOWN';

export interface ValidationIssue {
  /** The network's codes, e.g. MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION. */
  code: string;
  message: string;
  /** The IVMS101 path concerned, when one is. */
  field?: string;
}

export interface AppliedThreshold {
  /** The jurisdiction whose rules apply (its `countryCode`, `EU` or `FATF`). */
  jurisdiction: string;
  currency: string;
  threshold: number;
  /** The transfer's value in `currency`; absent when it could not be priced. */
  amount?: number;
  source: string;
  confidence: Confidence;
}

export interface Classification {
  type: TransferType;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  thresholds: { own: AppliedThreshold; counterparty: AppliedThreshold };
  /** The price used for the own jurisdiction, or why there was none. */
  price: FiatAmount | { unknown: string };
}

/**
 * What `POST /v1/transfers/validate` answers: the network's `TransactionFullValidationResult` (errors and warnings as
 * strings, each naming its IVMS101 path) plus the structured issues, both sides' thresholds and the price used.
 */
export interface TransferValidationResult {
  isValid: boolean;
  type: TransferType;
  beneficiaryAddressType: AddressType;
  /** Where the address type came from: the group's own registry, the network's directory, or nowhere. */
  addressSource: 'GROUP_REGISTRY' | 'DIRECTORY' | 'UNKNOWN';
  beneficiaryVASPname?: string;
  errors: string[];
  warnings: string[];
  details: { errors: ValidationIssue[]; warnings: ValidationIssue[] };
  thresholds: Classification['thresholds'];
  price: Classification['price'];
}
