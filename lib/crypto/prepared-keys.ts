/**
 * Keys made ready for X25519 once, then reused: parsing a did:key, converting it to X25519 and importing it into
 * OpenSSL costs more than the encryption of one field, and the network encrypts every field separately.
 *
 * - `RemoteDidKey`: someone's public did:key (a recipient, or the sender of data we decrypt). Cached by did.
 * - `LocalDidKey`: one of our own key records, holding the private key as an opaque KeyObject. It caches the
 *   static-static shared secrets (zS of ECDH-1PU) it computes with remote keys, which halves the X25519 work of a
 *   decryption and saves one X25519 per recipient on encryption.
 */
import type { KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { LRUCache } from 'lru-cache';
import { jweKidFromX25519, parseDidKey, x25519SecretFromSeed } from './did-key-identifier';
import { seedOfDidKeyRecord } from './didkey';
import { x25519, x25519PrivateKeyObject, x25519PublicKeyObject } from './x25519';

export interface RemoteDidKey {
  readonly did: string;
  /** `${did}#z6LS…`, the JWE kid of this key. */
  readonly kid: string;
  readonly x25519PublicKey: Uint8Array;
  readonly publicKey: KeyObject;
}

// Bounded, least recently used first out, because the set of counterparties is open-ended.
const REMOTE_KEYS = new LRUCache<string, RemoteDidKey>({ max: 4096 });

/** Parses (or finds in the cache) a public did:key. Throws ValidationError naming `field` when it is not usable. */
export function remoteDidKey(did: string, field = 'did'): RemoteDidKey {
  const cached = REMOTE_KEYS.get(did);
  if (cached) return cached;
  const parsed = parseDidKey(did, field);
  const x25519PublicKey = ed25519.utils.toMontgomery(parsed.ed25519PublicKey);
  const key: RemoteDidKey = {
    did: parsed.did,
    kid: jweKidFromX25519(parsed.did, x25519PublicKey),
    x25519PublicKey,
    publicKey: x25519PublicKeyObject(x25519PublicKey),
  };
  REMOTE_KEYS.set(did, key);
  return key;
}

export class LocalDidKey {
  readonly kid: string;
  readonly x25519PublicKey: Uint8Array;
  readonly #privateKey: KeyObject;
  /** zS per remote kid. Bounded because the set of counterparties is open-ended. */
  readonly #staticSecrets = new LRUCache<string, Buffer>({ max: 4096 });

  /** Only `LocalDidKey.from` builds these, after validating the record. */
  private constructor(
    readonly did: string,
    seed: Uint8Array,
  ) {
    this.x25519PublicKey = ed25519.utils.toMontgomery(parseDidKey(did).ed25519PublicKey);
    this.kid = jweKidFromX25519(did, this.x25519PublicKey);
    this.#privateKey = x25519PrivateKeyObject(x25519SecretFromSeed(seed), this.x25519PublicKey);
  }

  /** X25519 with a fresh (ephemeral) public key: never cached, since it is used once. */
  sharedSecretWith(publicKey: KeyObject): Buffer {
    return x25519(this.#privateKey, publicKey);
  }

  /** X25519 between this key and another static key, cached. */
  staticSecretWith(remote: RemoteDidKey): Buffer {
    let secret = this.#staticSecrets.get(remote.kid);
    if (!secret) {
      secret = x25519(this.#privateKey, remote.publicKey);
      this.#staticSecrets.set(remote.kid, secret);
    }
    return secret;
  }

  /** Keeps the private key out of logs and JSON dumps. */
  toJSON(): { did: string; kid: string } {
    return { did: this.did, kid: this.kid };
  }

  /**
   * Validates a key record and returns its prepared private key. The cache is keyed by did and checked against the
   * whole record, so a record that differs in any field is validated again rather than trusted.
   */
  static from(record: unknown, field = 'didKey'): LocalDidKey {
    const did = typeof record === 'object' && record !== null ? (record as { did?: unknown }).did : undefined;
    const source = JSON.stringify(record);
    if (typeof did === 'string') {
      const cached = LOCAL_KEYS.get(did);
      if (cached && cached.source === source) return cached.key;
    }
    const { did: parsedDid, seed } = seedOfDidKeyRecord(record, field);
    const key = new LocalDidKey(parsedDid, seed);
    LOCAL_KEYS.set(parsedDid, { source, key });
    return key;
  }
}

const LOCAL_KEYS = new LRUCache<string, { source: string; key: LocalDidKey }>({ max: 256 });

/** See `LocalDidKey.from`. */
export function localDidKey(record: unknown, field = 'didKey'): LocalDidKey {
  return LocalDidKey.from(record, field);
}
