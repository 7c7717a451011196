/**
 * The Transaction record and the request bodies of tx/create and tx/update, in the network's v1 shapes.
 * Validation answers 400 `NotabeneTransactionValidationError` whose message names the field.
 */
import { createHash } from 'node:crypto';
import { validateBeneficiary, validateOriginator } from '../../lib/ivms101';
import { badRequest } from '../errors';
import type { TransactionStatus } from './states';
import type { CustomAssetPrice } from '../jurisdictions/table';
import { ownershipProof, type OwnershipProof } from './proofs';
import { isObject } from '../../lib/is-object';

export interface TransactionAction {
  /** `0x` + sha-256 over the action and the previous action's hash: the history is a hash chain. */
  hash: string;
  /** The user DID whose credentials took the action; the network's DID for automatic steps; a simulated VASP's DID. */
  issuerDID: string;
  action: string;
  /** The reason given, or what made an automatic step happen. */
  actionData: string;
  createdAt: string;
  /** Status after the action (sandbox addition, handy for reading histories). */
  status: TransactionStatus;
}

export interface BlockchainInfo {
  txHash: string;
  origin: string;
  destination: string;
}

/** The Transaction object every tx endpoint answers (and the webhook carries, minus `pii`/`ivms101`). */
export interface Transaction {
  id: string;
  status: TransactionStatus;
  /** As the network classifies it at creation (sandbox/jurisdictions/classify.ts). */
  transactionType: 'BELOW_THRESHOLD' | 'NON_CUSTODIAL' | 'TRAVELRULE' | 'UNKNOWN';
  transactionRef?: string;
  /** A string, as the spec and interface.md type it: the symbol, or the text of the asset object the request gave (assetText). */
  transactionAsset: string;
  transactionAmount: string;
  /** The request's, else the asset's (assets.ts): `tx/list` answers TransactionResolved, which requires it. */
  transactionAssetDecimals: number;
  chargedQuantity: number;
  /** interface.md: "number or null"; the sandbox prices nothing. */
  amountInLocalCurrency: null;
  /**
   * The customers' DIDs: the request's, else derived (create.ts customerDid); never empty, the spec types them as DIDs.
   * An INCOMPLETE transaction (tx/notify, notify.ts) has no originator customer yet, so no originatorDid.
   */
  originatorDid?: string;
  beneficiaryDid: string;
  originatorRef?: string;
  beneficiaryRef?: string;
  /** Absent only on an INCOMPLETE transaction whose originator VASP the network could not tell (notify.ts). */
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  isTest: true;
  transactionBlockchainInfo: BlockchainInfo;
  protocol?: string;
  notificationEmail?: string;
  originatorProof?: OwnershipProof;
  beneficiaryProof?: OwnershipProof;
  blockchainTransactionTimestamp?: string;
  /** PII_IVMS: the IVMS101 tree with CIDs (or inline encrypted strings) as leaves. */
  pii?: Record<string, unknown>;
  /** Passthrough of the request's `encrypted` (opaque, schema-less). */
  ivms101Encrypted?: string;
  /** Only in tx/info answers to an owner in hosted mode: the decrypted record. Never stored. */
  ivms101?: Record<string, unknown>;
  actions: TransactionAction[];
  createdAt: string;
  updatedAt: string;
}

const DID = /^did:[a-zA-Z0-9]*:.+$/;
export const AMOUNT = /^0*[1-9][0-9]*$/;
const MAX_TEXT = 1024;

export const validationError = (message: string) => badRequest('NotabeneTransactionValidationError', message);

export function text(
  body: Record<string, unknown>,
  field: string,
  opts: { pattern?: RegExp; rule?: string; max?: number } = {},
): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw validationError(`${field}: must be a string`);
  if (v.length > (opts.max ?? MAX_TEXT))
    throw validationError(`${field}: must be at most ${opts.max ?? MAX_TEXT} characters`);
  if (opts.pattern && !opts.pattern.test(v))
    throw validationError(`${field}: ${opts.rule ?? `must match ${opts.pattern.source}`}`);
  return v;
}

export const did = (body: Record<string, unknown>, field: string) =>
  text(body, field, { pattern: DID, rule: 'must be a DID (did:<method>:<id>)' });

/**
 * The asset as given (symbol, `{caip19}` or `{coingeckoId, network}`) and its text: the symbol, the CAIP-19 id, or
 * `coingeckoId@network`. The text is what the Transaction answers as `transactionAsset` (a string in the spec and in
 * interface.md), what the index column holds and what `tx/list?transactionAsset=` matches.
 */
export function asset(v: unknown): { value: unknown; text: string } {
  if (typeof v === 'string') {
    if (!v.trim() || v.length > 64)
      throw validationError('transactionAsset: must be an asset symbol of 1 to 64 characters');
    return { value: v, text: v };
  }
  if (isObject(v) && typeof v.caip19 === 'string' && v.caip19) return { value: { caip19: v.caip19 }, text: v.caip19 };
  if (isObject(v) && typeof v.coingeckoId === 'string' && typeof v.network === 'string' && v.coingeckoId && v.network) {
    return { value: { coingeckoId: v.coingeckoId, network: v.network }, text: `${v.coingeckoId}@${v.network}` };
  }
  throw validationError('transactionAsset: must be an asset symbol, {caip19} or {coingeckoId, network}');
}

/**
 * The asset an address-book lookup of the transaction's destination matches: its symbol or CAIP-19 id; none ('', any
 * asset) for a CoinGecko pair (`id@network`), which the book does not index.
 */
export const lookupAsset = (transactionAsset: string): string =>
  transactionAsset.includes('@') ? '' : transactionAsset;

/** IVMS101 nests about eight levels; the cap keeps every later walk (ours, JSON.stringify, jsonb) off the stack limit. */
const MAX_DEPTH = 32;

/** Refuses a value nested deeper than MAX_DEPTH, without recursion (the value itself may be 100,000 levels deep). */
function checkDepth(v: unknown, field: string): void {
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_DEPTH) throw validationError(`${field}: must not nest deeper than ${MAX_DEPTH} levels`);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/** A `pii` tree: an object whose leaves are all non-empty strings. */
export function piiTree(v: unknown, field: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw validationError(`${field}: must be an object (PII_IVMS)`);
  checkDepth(v, field);
  const walk = (node: unknown, path: string): void => {
    if (typeof node === 'string') return;
    if (Array.isArray(node))
      return node.forEach((c, i) => (c === null || c === undefined ? undefined : walk(c, `${path}[${i}]`)));
    if (isObject(node)) return Object.entries(node).forEach(([k, c]) => walk(c, `${path}.${k}`));
    throw validationError(`${path}: every leaf of pii must be a string (a CID or an encrypted value)`);
  };
  walk(v, field);
  return v;
}

export function ivmsParty(
  body: Record<string, unknown>,
  field: 'originator' | 'beneficiary',
): Record<string, unknown> | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  const issues = field === 'originator' ? validateOriginator(v, field) : validateBeneficiary(v, field);
  if (issues.length) throw validationError(`${issues[0]!.field}: ${issues[0]!.rule}`);
  return v as Record<string, unknown>;
}

/** CustomAssetPrice `{priceUSD, decimals}`: both required, a finite price ≥ 0 and whole decimals from 0 to 255. */
export function customAssetPriceOf(body: Record<string, unknown>): CustomAssetPrice | undefined {
  const v = body.customAssetPrice;
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw validationError('customAssetPrice: must be an object {priceUSD, decimals}');
  const { priceUSD, decimals } = v;
  if (typeof priceUSD !== 'number' || !Number.isFinite(priceUSD) || priceUSD < 0)
    throw validationError('customAssetPrice.priceUSD: must be a number ≥ 0');
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255)
    throw validationError('customAssetPrice.decimals: must be a whole number from 0 to 255');
  return { priceUSD, decimals };
}

export const optionalObject = (body: Record<string, unknown>, field: string): unknown => {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw validationError(`${field}: must be an object`);
  checkDepth(v, field);
  return v;
};

export interface CreateRequest {
  transactionRef?: string;
  transactionAsset: unknown;
  /** What the Transaction answers as `transactionAsset` (see asset()). */
  assetText: string;
  transactionAmount: string;
  transactionAssetDecimals?: number;
  /** The caller's own price (CustomAssetPrice), for classifying an asset the network has no price for. */
  customAssetPrice?: CustomAssetPrice;
  originatorVASPdid: string;
  beneficiaryVASPdid?: string;
  beneficiaryVASPname?: string;
  originatorDid?: string;
  beneficiaryDid?: string;
  originatorRef?: string;
  beneficiaryRef?: string;
  blockchain: BlockchainInfo;
  originator?: Record<string, unknown>;
  beneficiary?: Record<string, unknown>;
  pii?: Record<string, unknown>;
  encrypted?: string;
  protocol?: string;
  notificationEmail?: string;
  originatorProof?: OwnershipProof;
  beneficiaryProof?: OwnershipProof;
  blockchainTransactionTimestamp?: string;
}

/** JSON with object keys sorted, so that two requests that mean the same serialise the same. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((c) => (c === undefined ? 'null' : stableJson(c))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v)
      .filter(([, c]) => c !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, c]) => `${JSON.stringify(k)}:${stableJson(c)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What a repeat of a create under the same transactionRef must match: the parsed request, whatever its key order. */
export const requestHash = (req: CreateRequest): string => createHash('sha256').update(stableJson(req)).digest('hex');

const REQUIRED = ['transactionAsset', 'transactionAmount', 'originatorVASPdid', 'transactionBlockchainInfo'] as const;

export function parseCreateRequest(body: unknown): CreateRequest {
  if (!isObject(body)) throw validationError('List of missing fields: ' + REQUIRED.join(', '));
  const missing: string[] = REQUIRED.filter((f) => body[f] === undefined || body[f] === null || body[f] === '');
  const info = body.transactionBlockchainInfo;
  if (isObject(info) && (info.destination === undefined || info.destination === null || info.destination === '')) {
    missing.push('transactionBlockchainInfo.destination');
  }
  if (missing.length) throw validationError(`List of missing fields: ${missing.join(', ')}`);
  const a = asset(body.transactionAsset);
  const amount = text(body, 'transactionAmount', {
    pattern: AMOUNT,
    rule: 'must be a whole number of base units greater than 0, as a string (^0*[1-9][0-9]*$)',
    max: 80,
  })!;
  if (!isObject(info))
    throw validationError('transactionBlockchainInfo: must be an object {txHash?, origin?, destination}');
  const blockchain: BlockchainInfo = {
    txHash: text(info, 'txHash') ?? '',
    origin: text(info, 'origin') ?? '',
    destination: text(info, 'destination')!,
  };
  const decimals = body.transactionAssetDecimals;
  if (
    decimals !== undefined &&
    (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255)
  ) {
    throw validationError('transactionAssetDecimals: must be a whole number from 0 to 255');
  }
  const protocol = text(body, 'protocol');
  if (protocol !== undefined && !['TRLight', 'TRP', 'OpenVASP'].includes(protocol)) {
    throw validationError('protocol: must be one of TRLight, TRP, OpenVASP');
  }
  return {
    transactionRef: text(body, 'transactionRef', { max: 256 }),
    transactionAsset: a.value,
    assetText: a.text,
    transactionAmount: amount,
    transactionAssetDecimals: decimals as number | undefined,
    customAssetPrice: customAssetPriceOf(body),
    originatorVASPdid: did(body, 'originatorVASPdid')!,
    beneficiaryVASPdid: did(body, 'beneficiaryVASPdid') || undefined,
    beneficiaryVASPname: text(body, 'beneficiaryVASPname'),
    originatorDid: did(body, 'originatorDid'),
    beneficiaryDid: did(body, 'beneficiaryDid'),
    originatorRef: text(body, 'originatorRef'),
    beneficiaryRef: text(body, 'beneficiaryRef'),
    blockchain,
    originator: ivmsParty(body, 'originator'),
    beneficiary: ivmsParty(body, 'beneficiary'),
    pii: piiTree(body.pii, 'pii'),
    // `encrypted` is the request's name (TransactionCreateRequest); `ivms101Encrypted` the response's, accepted too.
    encrypted:
      text(body, 'encrypted', { max: 4 * 1024 * 1024 }) ?? text(body, 'ivms101Encrypted', { max: 4 * 1024 * 1024 }),
    protocol,
    notificationEmail: text(body, 'notificationEmail'),
    originatorProof: ownershipProof(body, 'originatorProof'),
    beneficiaryProof: ownershipProof(body, 'beneficiaryProof'),
    blockchainTransactionTimestamp: text(body, 'blockchainTransactionTimestamp'),
  };
}

/** Fields of TransactionUpdateRequest, by who may change them. */
export const BENEFICIARY_UPDATABLE = [
  'beneficiaryDid',
  'beneficiaryRef',
  'beneficiaryProof',
  'beneficiary',
  'pii',
] as const;
export const UPDATABLE = [
  ...BENEFICIARY_UPDATABLE,
  'notificationEmail',
  'txHash',
  'destination',
  'origin',
  'beneficiaryVASPdid',
  'originatorVASPdid',
  'beneficiaryVASPname',
  'originatorDid',
  'originatorRef',
  'originator',
  'originatorProof',
  'protocol',
  'skipBeneficiaryDataValidation',
  'isNonCustodial',
  'onBehalfOfMyself',
  'blockchainTransactionTimestamp',
  'encrypted',
] as const;

export interface UpdateRequest {
  id: string;
  /** The fields present in the body, validated. */
  fields: Partial<Record<(typeof UPDATABLE)[number], unknown>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export function parseUpdateRequest(body: unknown): UpdateRequest {
  if (!isObject(body)) throw validationError('List of missing fields: id');
  if (body.id === undefined || body.id === null || body.id === '') throw validationError('List of missing fields: id');
  if (!isUuid(body.id)) throw validationError('id: must be a transaction id (UUID)');
  const fields: UpdateRequest['fields'] = {};
  for (const name of UPDATABLE) {
    if (body[name] === undefined) continue;
    switch (name) {
      case 'beneficiaryDid':
      case 'originatorDid':
      case 'beneficiaryVASPdid':
      case 'originatorVASPdid':
        fields[name] = did(body, name);
        break;
      case 'beneficiaryProof':
      case 'originatorProof':
        fields[name] = ownershipProof(body, name);
        break;
      case 'originator':
      case 'beneficiary':
        fields[name] = ivmsParty(body, name);
        break;
      case 'pii':
        fields[name] = piiTree(body.pii, 'pii');
        break;
      case 'skipBeneficiaryDataValidation':
      case 'isNonCustodial':
      case 'onBehalfOfMyself':
        if (typeof body[name] !== 'boolean') throw validationError(`${name}: must be a boolean`);
        fields[name] = body[name];
        break;
      case 'encrypted':
        fields[name] = text(body, name, { max: 4 * 1024 * 1024 });
        break;
      default:
        fields[name] = text(body, name);
    }
  }
  return { id: body.id, fields };
}
