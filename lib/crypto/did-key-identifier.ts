/**
 * did:key identifiers (W3C did:key method), restricted to Ed25519 — the only key type the network's personal-data
 * format can use. Every did:key that enters the system passes through `parseDidKey`, so a malformed value or a key of
 * another type (an X25519 `z6LS…`, a secp256k1 `zQ3s…`) is refused here with a ValidationError instead of producing
 * ciphertext nobody can read, which is what the vendor SDK does.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58btc } from 'multiformats/bases/base58';
import { ValidationError } from '../errors';

const DID_KEY_PREFIX = 'did:key:';
/** Multicodec varint prefixes (https://github.com/multiformats/multicodec/blob/master/table.csv). */
const ED25519_PUB = [0xed, 0x01] as const;
const X25519_PUB = [0xec, 0x01] as const;
const KNOWN_OTHER_CODECS: ReadonlyArray<{ prefix: readonly number[]; name: string }> = [
  { prefix: X25519_PUB, name: 'X25519' },
  { prefix: [0xe7, 0x01], name: 'secp256k1' },
  { prefix: [0x80, 0x24], name: 'P-256' },
  { prefix: [0x81, 0x24], name: 'P-384' },
  { prefix: [0x85, 0x24], name: 'RSA' },
  { prefix: [0xeb, 0x01], name: 'BLS12-381 G2' },
];

/** `z` + base58btc of the 34 bytes 0xed 0x01 ‖ key: always 48 characters, since the leading 0xed fixes the length. */
const ED25519_MULTIBASE_LENGTH = 48;

export const ED25519_DID_KEY_RULE = 'must be a did:key with an Ed25519 public key (did:key:z6Mk…)';

export interface ParsedDidKey {
  /** The did as given (it is already canonical: parsing round-trips it exactly). */
  readonly did: string;
  readonly ed25519PublicKey: Uint8Array;
}

/** Builds the did:key of an Ed25519 public key: `did:key:z` + base58btc(0xed 0x01 ‖ pub). */
export function didFromEd25519PublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new ValidationError('publicKey', 'must be 32 bytes');
  return DID_KEY_PREFIX + base58btc.encode(withPrefix(ED25519_PUB, publicKey));
}

/**
 * Parses an Ed25519 did:key and checks what the did:key spec asks a resolver to check: the `z` (base58btc) multibase
 * prefix, the multicodec, the key length, and that the bytes are a point on the curve. Small-order points are refused
 * too: their X25519 form yields an all-zero shared secret.
 */
export function parseDidKey(did: unknown, field = 'did'): ParsedDidKey {
  if (typeof did !== 'string' || !did.startsWith(DID_KEY_PREFIX)) {
    throw new ValidationError(field, ED25519_DID_KEY_RULE);
  }
  const multibase = did.slice(DID_KEY_PREFIX.length);
  if (!/^z[1-9A-HJ-NP-Za-km-z]+$/.test(multibase)) {
    throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; the key must be base58btc multibase with no fragment`);
  }
  // Base58 decoding takes time quadratic in the length: anything but the one length of an Ed25519 did:key is refused
  // before decoding, so a huge value (a key import, a counterparty's JWE skid) cannot stall the event loop.
  if (multibase.length !== ED25519_MULTIBASE_LENGTH) {
    throw new ValidationError(
      field,
      `${ED25519_DID_KEY_RULE}; the key part must be ${ED25519_MULTIBASE_LENGTH} characters, got ${multibase.length}`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = base58btc.decode(multibase);
  } catch {
    throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; the key is not valid base58btc`);
  }
  if (!hasPrefix(bytes, ED25519_PUB)) {
    const other = KNOWN_OTHER_CODECS.find((codec) => hasPrefix(bytes, codec.prefix));
    const found = other ? `an ${other.name} key` : 'an unsupported key type';
    throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; it holds ${found}`);
  }
  const publicKey = bytes.slice(ED25519_PUB.length);
  if (publicKey.length !== 32) {
    throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; the key must be 32 bytes, got ${publicKey.length}`);
  }
  if (!isUsableEd25519PublicKey(publicKey)) {
    throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; the key is not a valid Ed25519 point`);
  }
  // base58 has a single spelling for given bytes, but a leading-zero trick could still smuggle a second one.
  if (base58btc.encode(bytes) !== multibase) throw new ValidationError(field, `${ED25519_DID_KEY_RULE}; not canonical`);
  return { did, ed25519PublicKey: publicKey };
}

export function isUsableEd25519PublicKey(publicKey: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(publicKey).isSmallOrder();
  } catch {
    return false;
  }
}

export function ed25519PublicKeyFromDid(did: string, field = 'did'): Uint8Array {
  return parseDidKey(did, field).ed25519PublicKey;
}

/** The X25519 (Montgomery) form of the did's Ed25519 key, the key the network's encryption actually uses. */
export function x25519PublicKeyFromDid(did: string, field = 'did'): Uint8Array {
  return ed25519.utils.toMontgomery(parseDidKey(did, field).ed25519PublicKey);
}

/** X25519 secret from a 32-byte Ed25519 seed (SHA-512 then clamp, as libsodium and the SDK's stablelib do). */
export function x25519SecretFromSeed(seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new ValidationError('seed', 'must be 32 bytes');
  return ed25519.utils.toMontgomerySecret(seed);
}

/** The JWE `kid`/`skid` of a did:key: `${did}#z` + base58btc(0xec 0x01 ‖ x25519Pub). */
export function jweKidFromDid(did: string, field = 'did'): string {
  return jweKidFromX25519(parseDidKey(did, field).did, x25519PublicKeyFromDid(did, field));
}

/** Same as `jweKidFromDid` for callers that already hold the X25519 key (saves a second parse). */
export function jweKidFromX25519(did: string, x25519PublicKey: Uint8Array): string {
  return `${did}#${base58btc.encode(withPrefix(X25519_PUB, x25519PublicKey))}`;
}

function withPrefix(prefix: readonly number[], key: Uint8Array): Uint8Array {
  const out = new Uint8Array(prefix.length + key.length);
  out.set(prefix, 0);
  out.set(key, prefix.length);
  return out;
}

function hasPrefix(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}
