/**
 * X25519 on node:crypto (OpenSSL), about 40× faster than pure-JavaScript X25519, which is what makes the network's
 * per-field encryption affordable. Keys enter as raw 32-byte values through JWK: Node's JWK import is an order of
 * magnitude cheaper than its DER (PKCS#8/SPKI) import, and it is done once per key thanks to the callers' caches.
 */
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto';
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

export function generateEphemeralX25519(): EphemeralX25519 {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return { privateKey, x: publicKey.export({ format: 'jwk' }).x! };
}
