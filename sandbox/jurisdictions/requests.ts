/**
 * The bodies of `POST /tx/validate` (TransactionValidateRequest, deprecated) and `POST /tx/validate/full`
 * (TransactionValidateFullRequest) and the query of `GET /jurisdictions`. A refusal is 400
 * `NotabeneTransactionValidationError` whose message names the field, as tx/create's.
 */
import { isObject } from '../../lib/is-object';
import { badRequest } from '../errors';
import {
  AMOUNT,
  asset,
  customAssetPriceOf,
  did,
  ivmsParty,
  optionalObject,
  piiTree,
  text,
  validationError,
} from '../transactions/model';
import { ownershipProof } from '../transactions/proofs';
import type { CustomAssetPrice } from './table';

const amountOf = (body: Record<string, unknown>) =>
  text(body, 'transactionAmount', {
    pattern: AMOUNT,
    rule: 'must be a whole number of base units greater than 0, as a string (^0*[1-9][0-9]*$)',
    max: 80,
  })!;

function bool(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw validationError(`${field}: must be true or false`);
  return v;
}

function missingOf(body: Record<string, unknown>, required: readonly string[]): void {
  const missing = required.filter((f) => body[f] === undefined || body[f] === null || body[f] === '');
  if (missing.length) throw validationError(`List of missing fields: ${missing.join(', ')}`);
}

export interface ValidateRequest {
  assetText: string;
  transactionAmount: string;
  destination: string;
  originatorVASPdid: string;
  originatorEqualsBeneficiary: boolean;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  beneficiaryName?: string;
  beneficiaryAccountNumber?: string;
  hasBeneficiaryAddress: boolean;
  hasBeneficiaryProof: boolean;
  travelRuleBehavior?: boolean;
}

export function parseValidateRequest(body: unknown): ValidateRequest {
  const REQUIRED = [
    'transactionAsset',
    'destination',
    'transactionAmount',
    'originatorVASPdid',
    'originatorEqualsBeneficiary',
  ];
  if (!isObject(body)) throw validationError(`List of missing fields: ${REQUIRED.join(', ')}`);
  missingOf(body, REQUIRED);
  if (typeof body.transactionAsset !== 'string')
    throw validationError('transactionAsset: must be an asset symbol (BTC, ETH)');
  const a = asset(body.transactionAsset);
  const address = optionalObject(body, 'beneficiaryAddress');
  text(body, 'network');
  return {
    assetText: a.text,
    transactionAmount: amountOf(body),
    destination: text(body, 'destination')!,
    originatorVASPdid: did(body, 'originatorVASPdid')!,
    originatorEqualsBeneficiary: bool(body, 'originatorEqualsBeneficiary')!,
    beneficiaryVASPdid: did(body, 'beneficiaryVASPdid') || undefined,
    beneficiaryVASPname: text(body, 'beneficiaryVASPname'),
    beneficiaryName: text(body, 'beneficiaryName') || undefined,
    beneficiaryAccountNumber: text(body, 'beneficiaryAccountNumber') || undefined,
    hasBeneficiaryAddress: address !== undefined && Object.keys(address as object).length > 0,
    hasBeneficiaryProof: ownershipProof(body, 'beneficiaryProof') !== undefined,
    travelRuleBehavior: bool(body, 'travelRuleBehavior'),
  };
}

export type PartyFields = 'BENEFICIARY' | 'ORIGINATOR' | 'ALL';

export interface ValidateFullRequest {
  assetText: string;
  transactionAmount: string;
  transactionAssetDecimals?: number;
  customAssetPrice?: CustomAssetPrice;
  destination: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  originator?: Record<string, unknown>;
  beneficiary?: Record<string, unknown>;
  pii?: Record<string, unknown>;
  hasBeneficiaryProof: boolean;
  travelRuleBehavior?: boolean;
  validatePartyFields: PartyFields;
}

export function parseValidateFullRequest(body: unknown): ValidateFullRequest {
  const REQUIRED = ['transactionAsset', 'transactionAmount', 'transactionBlockchainInfo'];
  if (!isObject(body)) throw validationError(`List of missing fields: ${REQUIRED.join(', ')}`);
  missingOf(body, REQUIRED);
  const info = body.transactionBlockchainInfo;
  if (!isObject(info))
    throw validationError('transactionBlockchainInfo: must be an object {txHash?, origin?, destination}');
  if (info.destination === undefined || info.destination === null || info.destination === '')
    throw validationError('List of missing fields: transactionBlockchainInfo.destination');
  const destination = text(info, 'destination')!;
  text(info, 'txHash');
  text(info, 'origin');
  const a = asset(body.transactionAsset);
  const decimals = body.transactionAssetDecimals;
  if (
    decimals !== undefined &&
    (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255)
  )
    throw validationError('transactionAssetDecimals: must be a whole number from 0 to 255');
  const party = body.validatePartyFields ?? 'ALL';
  if (party !== 'BENEFICIARY' && party !== 'ORIGINATOR' && party !== 'ALL')
    throw validationError('validatePartyFields: must be one of BENEFICIARY, ORIGINATOR, ALL');
  const protocol = text(body, 'protocol');
  if (protocol !== undefined && !['TRLight', 'TRP', 'OpenVASP'].includes(protocol))
    throw validationError('protocol: must be one of TRLight, TRP, OpenVASP');
  for (const f of ['notificationEmail', 'network']) text(body, f);
  text(body, 'encrypted', { max: 4 * 1024 * 1024 });
  for (const f of ['originatorDid', 'beneficiaryDid']) did(body, f);
  for (const f of ['skipBeneficiaryDataValidation', 'onBehalfOfMyself']) bool(body, f);
  ownershipProof(body, 'originatorProof');
  return {
    assetText: a.text,
    transactionAmount: amountOf(body),
    ...(decimals !== undefined && { transactionAssetDecimals: decimals as number }),
    customAssetPrice: customAssetPriceOf(body),
    destination,
    originatorVASPdid: did(body, 'originatorVASPdid') || undefined,
    beneficiaryVASPdid: did(body, 'beneficiaryVASPdid') || undefined,
    beneficiaryVASPname: text(body, 'beneficiaryVASPname'),
    originator: ivmsParty(body, 'originator'),
    beneficiary: ivmsParty(body, 'beneficiary'),
    pii: piiTree(body.pii, 'pii'),
    hasBeneficiaryProof: ownershipProof(body, 'beneficiaryProof') !== undefined,
    travelRuleBehavior: bool(body, 'travelRuleBehavior'),
    validatePartyFields: party,
  };
}

export interface JurisdictionQuery {
  countryCode?: string;
  fallbackToFATF: boolean;
}

/** `?countryCode` (two letters, either case), `?fallbackToFATF` (true|false), `?division` (read, not used). */
export function parseJurisdictionQuery(query: Record<string, unknown>): JurisdictionQuery {
  for (const [k, v] of Object.entries(query))
    if (Array.isArray(v)) throw badRequest('ValidationError', `${k}: must be given once`);
  const { countryCode, fallbackToFATF, division } = query;
  if (countryCode !== undefined && (typeof countryCode !== 'string' || !/^[A-Za-z]{2}$/.test(countryCode)))
    throw badRequest('ValidationError', 'countryCode: must be an ISO 3166-1 alpha-2 code (two letters)');
  if (fallbackToFATF !== undefined && fallbackToFATF !== 'true' && fallbackToFATF !== 'false')
    throw badRequest('ValidationError', 'fallbackToFATF: must be true or false');
  if (division !== undefined && (typeof division !== 'string' || division.length > 64))
    throw badRequest('ValidationError', 'division: must be at most 64 characters');
  return {
    ...(countryCode !== undefined && { countryCode: (countryCode as string).toUpperCase() }),
    fallbackToFATF: fallbackToFATF === 'true',
  };
}
