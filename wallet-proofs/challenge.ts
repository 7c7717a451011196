/**
 * The challenge a self-hosted wallet signs to prove its owner controls it. Pure: the caller makes the nonce and the
 * expiry and stores the fields; the text (or EIP-712 typed data) is rebuilt from them at verification, so a changed
 * field changes what was signed and the signature no longer matches. Whether the expiry has passed is the caller's
 * decision (it owns the clock); here it is only bound into the signed content.
 */
import { ValidationError } from '../lib/errors';
import { toChecksumAddress } from './addresses';

export type SignatureScheme = 'EIP191' | 'EIP712' | 'BIP137' | 'BIP322';
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['EIP191', 'EIP712', 'BIP137', 'BIP322'];

export interface ChallengeFields {
  /** 32 random bytes, hex (64 characters, an optional 0x), made by the caller. */
  nonce: string;
  /** The wallet address. */
  address: string;
  /** The asset label as the project uses it (outgoing/request.ts assetLabel): 'ETH', 'BTC', 'USDC-ERC20', a CAIP-19… */
  asset: string;
  /** The customer reference (opaque, not personal data). */
  customerRef: string;
  /** The subsidiary asking. */
  vaspDid: string;
  /** ISO 8601. */
  expiresAt: string;
}

export interface Eip712TypeField {
  name: string;
  type: string;
}

/** The JSON a wallet's eth_signTypedData_v4 takes. */
export interface Eip712TypedData {
  types: Record<string, Eip712TypeField[]>;
  primaryType: string;
  domain: { name?: string; version?: string; chainId?: number; verifyingContract?: string; salt?: string };
  message: Record<string, unknown>;
}

export const EIP712_DOMAIN = { name: 'travel-rule-orchestrator ownership proof', version: '1' } as const;

const TITLE = 'Travel Rule wallet ownership proof';

/** The text (EIP-191, BIP-137, BIP-322) or typed data (EIP-712) the wallet signs, rebuilt from the fields. */
export function challengeFor(
  scheme: SignatureScheme,
  fields: ChallengeFields,
): { message: string } | { typedData: Eip712TypedData } {
  if (!SIGNATURE_SCHEMES.includes(scheme))
    throw new ValidationError('scheme', `must be one of ${SIGNATURE_SCHEMES.join(', ')}`);
  const f = normalizedFields(fields);
  if (scheme === 'EIP712') {
    return {
      typedData: {
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
          ],
          OwnershipProof: [
            { name: 'address', type: 'address' },
            { name: 'asset', type: 'string' },
            { name: 'customerRef', type: 'string' },
            { name: 'vaspDid', type: 'string' },
            { name: 'nonce', type: 'bytes32' },
            { name: 'expiresAt', type: 'string' },
          ],
        },
        primaryType: 'OwnershipProof',
        // No chainId: the proof is about a key, not a chain, and wallets refuse typed data whose chainId differs
        // from the network they are switched to.
        domain: { ...EIP712_DOMAIN },
        message: {
          address: f.address,
          asset: f.asset,
          customerRef: f.customerRef,
          vaspDid: f.vaspDid,
          nonce: `0x${f.nonce}`,
          expiresAt: f.expiresAt,
        },
      },
    };
  }
  return {
    message: [
      TITLE,
      'I confirm that I control the private key of this wallet.',
      `Address: ${f.address}`,
      `Asset: ${f.asset}`,
      `Customer reference: ${f.customerRef}`,
      `Requested by: ${f.vaspDid}`,
      `Nonce: ${f.nonce}`,
      `Expires at: ${f.expiresAt}`,
    ].join('\n'),
  };
}

const NONCE = /^(?:0x)?([0-9a-fA-F]{64})$/;
// One line of printable text: a newline in a field could forge another line of the signed message.
const LINE = /^[^\p{Cc}\p{Zl}\p{Zp}]{1,256}$/u;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** The fields checked for form and put in one canonical spelling (lower-case nonce without 0x, the address's). */
export function normalizedFields(fields: ChallengeFields): ChallengeFields {
  const nonce = NONCE.exec(typeof fields.nonce === 'string' ? fields.nonce : '');
  if (!nonce) throw new ValidationError('nonce', 'must be 32 bytes in hex (64 hex characters)');
  for (const key of ['address', 'asset', 'customerRef', 'vaspDid'] as const) {
    const value = fields[key];
    if (typeof value !== 'string' || !LINE.test(value))
      throw new ValidationError(key, 'must be 1 to 256 characters on one line, without control characters');
  }
  if (
    typeof fields.expiresAt !== 'string' ||
    !ISO_TIME.test(fields.expiresAt) ||
    Number.isNaN(Date.parse(fields.expiresAt))
  )
    throw new ValidationError('expiresAt', 'must be an ISO 8601 date and time with a zone');
  return { ...fields, nonce: nonce[1]!.toLowerCase(), address: canonicalAddress(fields.address) };
}

/**
 * One spelling per address, so the signed text does not depend on the letter case the customer typed: EIP-55 for
 * Ethereum, lower case for an all-upper-case bech32 (QR codes carry it so).
 */
function canonicalAddress(address: string): string {
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return toChecksumAddress(address);
  if (/^(?:BC|TB|BCRT)1[0-9A-Z]+$/.test(address)) return address.toLowerCase();
  return address;
}
