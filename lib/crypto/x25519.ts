/**
 * X25519 on node:crypto (OpenSSL), about 40× faster than pure-JavaScript X25519, which is what makes the network's
 * per-field encryption affordable. Keys enter as raw 32-byte values through JWK: Node's JWK import is an order of
 * magnitude cheaper than its DER (PKCS#8/SPKI) import, and it is done once per key thanks to the callers' caches.
 */
import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  type X25519KeyPairKeyObjectOptions,
} from 'node:crypto';
import { bytesToBase64url } from './encoding';

export function x25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: bytesToBase64url(publicKey) }, format: 'jwk' });
}

/** `publicKey` must be the X25519 public key of `secret`: the JWK format carries both. */
export function x25519PrivateKeyObject(secret: Uint8Array, publicKey: Uint8Array): KeyObject {
  return createPrivateKey({
    key: { kty: 'OKP', crv: 'X25519', x: bytesToBase64url(publicKey), d: bytesToBase64url(secret) },
    format: 'jwk',
  });
}

/**
 * Raw X25519 shared secret. OpenSSL refuses an all-zero result (a small-order peer key), which surfaces here as an
 * exception for the caller to turn into its own error.
 */
export function x25519(privateKey: KeyObject, publicKey: KeyObject): Buffer {
  return diffieHellman({ privateKey, publicKey });
}

export interface EphemeralX25519 {
  privateKey: KeyObject;
  /** The public key, already base64url as the JWE `epk.x` wants it. */
  x: string;
}

/**
 * The public key is encoded by the key-generation job itself, not exported afterwards: on Node 20 (at least to
 * 20.20), `keyObject.export({format: 'jwk'})` on a freshly generated X25519 key holds the key's mutex while allocating,
 * and if that allocation runs the GC finaliser of the generation job, which takes the same mutex, the process
 * deadlocks (observed in the benchmark; reproducible with `node --gc-interval=97`). Encoding inside the job is
 * immune, because the job cannot be collected while it is running.
 */
export function generateEphemeralX25519(): EphemeralX25519 {
  // @types/node 20 has no overload for a JWK-encoded key pair, though Node supports it (v15.9+).
  const options = { publicKeyEncoding: { format: 'jwk' } } as unknown as X25519KeyPairKeyObjectOptions;
  const { privateKey, publicKey } = generateKeyPairSync('x25519', options) as unknown as {
    privateKey: KeyObject;
    publicKey: JsonWebKey;
  };
  if (typeof publicKey.x !== 'string') throw new Error('X25519 key generation returned no public key');
  return { privateKey, x: publicKey.x };
}
