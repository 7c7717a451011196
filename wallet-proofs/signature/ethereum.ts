/**
 * Ethereum signatures: EIP-191 personal_sign and EIP-712 typed data, recovered on secp256k1 (@noble/curves) to the
 * signer's address. A 65-byte r‖s‖v signature; v is 27/28 (what wallets give) or 0/1 (what some libraries give).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { ValidationError } from '../../lib/errors';
import type { Eip712TypedData, Eip712TypeField } from '../challenge';
import type { SignatureCheck } from '../signature';

export interface RecoverableSignature {
  /** r‖s, 64 bytes. */
  compact: Uint8Array;
  recovery: number;
}

/** Parses 0x + 130 hex characters; anything else is malformed and names `field`. */
export function parseEthereumSignature(signature: string, field = 'signature'): RecoverableSignature {
  if (typeof signature !== 'string' || !/^(?:0x)?[0-9a-fA-F]*$/.test(signature))
    throw new ValidationError(field, 'must be hex: 0x and 130 hex characters (r, s, v)');
  const hex = signature.startsWith('0x') ? signature.slice(2) : signature;
  if (hex.length !== 130)
    throw new ValidationError(field, `must be 65 bytes (0x and 130 hex characters), not ${Math.floor(hex.length / 2)}`);
  const bytes = hexToBytes(hex);
  const v = bytes[64]!;
  if (v !== 27 && v !== 28 && v !== 0 && v !== 1)
    throw new ValidationError(field, 'v (the last byte) must be 27, 28, 0 or 1');
  return { compact: bytes.slice(0, 64), recovery: v >= 27 ? v - 27 : v };
}

/** The address (lower case) of the key that made `signature` over the 32-byte `digest`, or why there is none. */
export function recoverEthereumAddress(
  digest: Uint8Array,
  signature: RecoverableSignature,
): { address: string } | { reason: string } {
  let sig;
  try {
    sig = secp256k1.Signature.fromBytes(signature.compact, 'compact');
  } catch {
    return { reason: 'r or s is out of range for secp256k1' };
  }
  // Wallets only make low-s signatures (EIP-2); a high-s one is the mirror of another valid signature, and taking
  // both would give one proof two signature strings.
  if (sig.hasHighS()) return { reason: 'non-canonical signature (s in the upper half of the curve order)' };
  let publicKey: Uint8Array;
  try {
    publicKey = sig.addRecoveryBit(signature.recovery).recoverPublicKey(digest).toBytes(false);
  } catch {
    return { reason: 'no public key recovers from this signature' };
  }
  return { address: ethereumAddressOf(publicKey) };
}

/** The lower-case address of an uncompressed (65-byte) or compressed (33-byte) secp256k1 public key. */
export function ethereumAddressOf(publicKey: Uint8Array): string {
  const uncompressed = publicKey.length === 65 ? publicKey : secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return `0x${bytesToHex(keccak_256(uncompressed.slice(1)).slice(12))}`;
}

/** EIP-191 version 0x45 (personal_sign): keccak256("\x19Ethereum Signed Message:\n" + byte length + message). */
export function eip191Digest(message: string): Uint8Array {
  const body = utf8ToBytes(message);
  return keccak_256(concatBytes(utf8ToBytes(`\x19Ethereum Signed Message:\n${body.length}`), body));
}

/** EIP-712: keccak256(0x1901 ‖ hashStruct(domain) ‖ hashStruct(message)). */
export function eip712Digest(typedData: Eip712TypedData): Uint8Array {
  const domainTypes = typedData.types.EIP712Domain ?? domainTypesOf(typedData.domain);
  const types = { ...typedData.types, EIP712Domain: domainTypes };
  return keccak_256(
    concatBytes(
      new Uint8Array([0x19, 0x01]),
      hashStruct('EIP712Domain', typedData.domain as Record<string, unknown>, types),
      hashStruct(typedData.primaryType, typedData.message, types),
    ),
  );
}

export function verifyEthereumSignature(digest: Uint8Array, signature: string, address: string): SignatureCheck {
  const recovered = recoverEthereumAddress(digest, parseEthereumSignature(signature));
  if ('reason' in recovered) return { valid: false, reason: recovered.reason };
  if (recovered.address !== address.toLowerCase())
    return { valid: false, reason: 'the signature was made by the key of another address, or over other content' };
  return { valid: true };
}

function domainTypesOf(domain: Eip712TypedData['domain']): Eip712TypeField[] {
  const all: Eip712TypeField[] = [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
    { name: 'salt', type: 'bytes32' },
  ];
  return all.filter((f) => (domain as Record<string, unknown>)[f.name] !== undefined);
}

type Types = Record<string, Eip712TypeField[]>;

function encodeType(primaryType: string, types: Types): string {
  const deps = [...dependencies(primaryType, types, new Set())].filter((t) => t !== primaryType).sort();
  return [primaryType, ...deps].map((t) => `${t}(${types[t]!.map((f) => `${f.type} ${f.name}`).join(',')})`).join('');
}

function dependencies(type: string, types: Types, found: Set<string>): Set<string> {
  const base = type.replace(/\[\d*\]$/, '');
  if (found.has(base) || !types[base]) return found;
  found.add(base);
  for (const f of types[base]) dependencies(f.type.replace(/\[\d*\]$/, ''), types, found);
  return found;
}

function hashStruct(type: string, data: Record<string, unknown>, types: Types): Uint8Array {
  const fields = types[type];
  if (!fields) throw new ValidationError('typedData', `has no type ${type}`);
  return keccak_256(
    concatBytes(
      keccak_256(utf8ToBytes(encodeType(type, types))),
      ...fields.map((f) => encodeValue(f.type, data[f.name], types, f.name)),
    ),
  );
}

/** One 32-byte word of the EIP-712 encoding. */
function encodeValue(type: string, value: unknown, types: Types, name: string): Uint8Array {
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw new ValidationError(name, `must be an array of ${array[1]}`);
    return keccak_256(concatBytes(...value.map((v) => encodeValue(array[1]!, v, types, name))));
  }
  if (types[type]) return hashStruct(type, value as Record<string, unknown>, types);
  if (type === 'string') return keccak_256(utf8ToBytes(String(value)));
  if (type === 'bytes') return keccak_256(hexBytes(value, name));
  if (type === 'bool') return word(value ? 1n : 0n);
  if (type === 'address') {
    const bytes = hexBytes(value, name);
    if (bytes.length !== 20) throw new ValidationError(name, 'must be a 20-byte address');
    return word(BigInt(`0x${bytesToHex(bytes)}`));
  }
  const fixed = /^bytes(\d+)$/.exec(type);
  if (fixed) {
    const bytes = hexBytes(value, name);
    if (bytes.length !== Number(fixed[1])) throw new ValidationError(name, `must be ${fixed[1]} bytes`);
    const out = new Uint8Array(32);
    out.set(bytes);
    return out;
  }
  const int = /^(u?)int(\d*)$/.exec(type);
  if (int) {
    let n = BigInt(value as string | number | bigint);
    if (n < 0n) n = (1n << 256n) + n;
    return word(n);
  }
  throw new ValidationError(name, `has the unsupported EIP-712 type ${type}`);
}

function word(n: bigint): Uint8Array {
  return hexToBytes(n.toString(16).padStart(64, '0'));
}

function hexBytes(value: unknown, name: string): Uint8Array {
  if (typeof value !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(value))
    throw new ValidationError(name, 'must be 0x-prefixed hex');
  return hexToBytes(value.slice(2));
}
