/**
 * The network's key record (JsonDIDKey): create, parse, and strip to a public
 * view. Parsing is stricter than the vendor SDK, which accepts a record whose key does not match its did (then encrypts
 * data nobody can read) and ignores the public half of `privateKeyHex`: here every copy of the public key must agree
 * with the did and with the seed, so a corrupted or spliced record is refused before it is used.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { ValidationError } from '../errors';
import { didFromEd25519PublicKey, parseDidKey } from './did-key-identifier';
import { bytesToHex, equalBytes, hexToBytes } from './encoding';

export interface PublicDidKeyEntry {
  type: 'Ed25519';
  kid: string;
  publicKeyHex: string;
  meta: { algorithms: string[] };
  kms: 'local';
}

export interface DidKeyEntry extends PublicDidKeyEntry {
  /** 128 hex: the 32-byte Ed25519 seed followed by the 32-byte public key. Secret. */
  privateKeyHex: string;
}

/** A VASP's key pair as the key store keeps it. Holds the private key: only the key store should see it. */
export interface DidKeyRecord {
  did: string;
  controllerKeyId: string;
  keys: [DidKeyEntry];
  services: [];
  provider: 'did:key';
}

/** The same record without the private key: what every component other than the key store handles. */
export interface PublicDidKeyRecord {
  did: string;
  controllerKeyId: string;
  keys: [PublicDidKeyEntry];
  services: [];
  provider: 'did:key';
}

/** Creates a new Ed25519 key record. `seed` (32 bytes) is for deterministic tests; omit it in production. */
export function createDidKeyRecord(seed: Uint8Array = ed25519.utils.randomSecretKey()): DidKeyRecord {
  if (seed.length !== 32) throw new ValidationError('seed', 'must be 32 bytes');
  const publicKey = ed25519.getPublicKey(seed);
  const publicKeyHex = bytesToHex(publicKey);
  return {
    did: didFromEd25519PublicKey(publicKey),
    controllerKeyId: publicKeyHex,
    keys: [{ ...publicEntry(publicKeyHex), privateKeyHex: bytesToHex(seed) + publicKeyHex }],
    services: [],
    provider: 'did:key',
  };
}

/**
 * Validates a key record (e.g. read from the key store or made by the vendor SDK or CLI) and returns it in canonical
 * form: lower-case hex, exactly the documented fields. Fields outside the JsonDIDKey shape carry nothing the crypto
 * needs and are not copied. Messages name the failing field, never its value.
 */
export function parseDidKeyRecord(input: unknown, field = 'didKey'): DidKeyRecord {
  const { did, publicKey, entry } = parseCommon(input, field);
  const privateKey = hexToBytes(entry.privateKeyHex, 64);
  if (!privateKey) {
    throw new ValidationError(
      `${field}.keys[0].privateKeyHex`,
      'must be 128 hex characters: the 32-byte Ed25519 seed followed by the 32-byte public key',
    );
  }
  const seed = privateKey.subarray(0, 32);
  if (!equalBytes(privateKey.subarray(32), publicKey)) {
    throw new ValidationError(`${field}.keys[0].privateKeyHex`, 'its public half does not match publicKeyHex and did');
  }
  if (!equalBytes(ed25519.getPublicKey(seed), publicKey)) {
    throw new ValidationError(`${field}.keys[0].privateKeyHex`, 'its seed does not produce the public key of the did');
  }
  const publicKeyHex = bytesToHex(publicKey);
  return {
    did,
    controllerKeyId: publicKeyHex,
    keys: [{ ...publicEntry(publicKeyHex), privateKeyHex: bytesToHex(privateKey) }],
    services: [],
    provider: 'did:key',
  };
}

/**
 * Validates a public key record. A record that carries `privateKeyHex` is refused rather than stripped: it means a
 * secret is travelling where it should not, and the caller must learn that.
 */
export function parsePublicDidKeyRecord(input: unknown, field = 'didKey'): PublicDidKeyRecord {
  const { did, publicKey, entry } = parseCommon(input, field);
  if ('privateKeyHex' in entry) {
    throw new ValidationError(`${field}.keys[0].privateKeyHex`, 'must not be present in a public key record');
  }
  const publicKeyHex = bytesToHex(publicKey);
  return { did, controllerKeyId: publicKeyHex, keys: [publicEntry(publicKeyHex)], services: [], provider: 'did:key' };
}

export function toPublicDidKeyRecord(record: DidKeyRecord | PublicDidKeyRecord): PublicDidKeyRecord {
  const [entry] = record.keys;
  return {
    did: record.did,
    controllerKeyId: record.controllerKeyId,
    keys: [publicEntry(entry.publicKeyHex)],
    services: [],
    provider: 'did:key',
  };
}

/** The 32-byte Ed25519 seed of a record, after full validation. */
export function seedOfDidKeyRecord(record: unknown, field = 'didKey'): { did: string; seed: Uint8Array } {
  const parsed = parseDidKeyRecord(record, field);
  return { did: parsed.did, seed: hexToBytes(parsed.keys[0].privateKeyHex, 64)!.subarray(0, 32) };
}

function publicEntry(publicKeyHex: string): PublicDidKeyEntry {
  return { type: 'Ed25519', kid: publicKeyHex, publicKeyHex, meta: { algorithms: ['Ed25519', 'EdDSA'] }, kms: 'local' };
}

function parseCommon(input: unknown, field: string) {
  if (!isObject(input)) throw new ValidationError(field, 'must be a JsonDIDKey object');
  if (input.provider !== 'did:key') throw new ValidationError(`${field}.provider`, "must be 'did:key'");
  const { did, ed25519PublicKey } = parseDidKey(input.did, `${field}.did`);
  if (!Array.isArray(input.keys) || input.keys.length !== 1) {
    throw new ValidationError(`${field}.keys`, 'must hold exactly one Ed25519 key');
  }
  const entry: unknown = input.keys[0];
  const at = `${field}.keys[0]`;
  if (!isObject(entry)) throw new ValidationError(at, 'must be a key object');
  if (entry.type !== 'Ed25519') throw new ValidationError(`${at}.type`, "must be 'Ed25519'");
  const publicKey = hexToBytes(entry.publicKeyHex, 32);
  if (!publicKey) throw new ValidationError(`${at}.publicKeyHex`, 'must be 64 hex characters (a 32-byte public key)');
  if (!equalBytes(publicKey, ed25519PublicKey)) {
    throw new ValidationError(`${at}.publicKeyHex`, 'does not match the key in did');
  }
  for (const [name, value] of [
    [`${at}.kid`, entry.kid],
    [`${field}.controllerKeyId`, input.controllerKeyId],
  ] as const) {
    const bytes = hexToBytes(value, 32);
    if (!bytes || !equalBytes(bytes, publicKey)) throw new ValidationError(name, 'must equal publicKeyHex');
  }
  return { did, publicKey, entry };
}

export {
  didFromEd25519PublicKey,
  ed25519PublicKeyFromDid,
  jweKidFromDid,
  parseDidKey,
  x25519PublicKeyFromDid,
  x25519SecretFromSeed,
  type ParsedDidKey,
} from './did-key-identifier';
import { isObject } from '../is-object';
