/**
 * Authenticated multi-recipient JWE in the network's format: General JSON serialization,
 * XChaCha20-Poly1305 content encryption ("XC20P"), and per recipient an ECDH-1PU+XC20PKW wrap of the content key
 * with its own ephemeral key. Byte-for-byte the structure did-jwt's `createJWE` with
 * `xc20pAuthEncrypterEcdh1PuV3x25519WithXc20PkwV2` produces, and readable by it; the test suite keeps did-jwt and the
 * vendor SDK as the reference.
 *
 * Built directly on node:crypto X25519 and @noble/ciphers because did-jwt's pure-JavaScript X25519 makes the
 * network's one-JWE-per-field scheme 20–40× slower.
 */
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { CryptoError, ValidationError } from '../errors';
import { ecdh1puKek, KEY_AGREEMENT_ALG } from './ecdh-1pu';
import { base64urlToBytes, bytesToBase64url } from './encoding';
import type { Keyring } from './keyring';
import { remoteDidKey, type LocalDidKey, type RemoteDidKey } from './prepared-keys';
import { generateEphemeralX25519, x25519, x25519PublicKeyObject } from './x25519';
import { isObject } from '../is-object';

export const JWE_TYP = 'application/didcomm-encrypted+json';
export const JWE_ENC = 'XC20P';

export interface JweRecipient {
  encrypted_key: string;
  header: {
    iv: string;
    tag: string;
    kid: string;
    alg: typeof KEY_AGREEMENT_ALG;
    epk: { kty: 'OKP'; crv: 'X25519'; x: string };
  };
}

export interface GeneralJwe {
  protected: string;
  iv: string;
  ciphertext: string;
  tag: string;
  recipients: JweRecipient[];
}

export interface DecryptedJwe {
  plaintext: Uint8Array;
  /** The did of the `skid`: the key the content is authenticated with. */
  senderDid: string;
  /** Which of our keys the entry we used was addressed to. */
  recipientDid: string;
}

const NONCE = 24;
const TAG = 16;
const CEK = 32;

/**
 * Encrypts `plaintext` once for all `recipients`, in the order given (the caller puts the sender first, as the network
 * does). The sender's own key authenticates every entry (ECDH-1PU).
 */
export function encryptJwe(
  plaintext: Uint8Array,
  sender: LocalDidKey,
  recipients: readonly RemoteDidKey[],
): GeneralJwe {
  if (recipients.length === 0) throw new ValidationError('recipients', 'must name at least one did:key');
  // Key order matches did-jwt's output (skid, typ, then enc), so the protected header is byte-identical.
  const protectedHeader = bytesToBase64url(
    Buffer.from(JSON.stringify({ skid: sender.kid, typ: JWE_TYP, enc: JWE_ENC }), 'utf8'),
  );
  // All fresh randomness of this message in one call (content key, content nonce, one wrap nonce per recipient):
  // each call into OpenSSL's generator costs as much as an XChaCha20-Poly1305 of a field.
  const random = randomBytes(CEK + NONCE * (1 + recipients.length));
  const cek = random.subarray(0, CEK);
  const iv = random.subarray(CEK, CEK + NONCE);
  const sealed = xchacha20poly1305(cek, iv, Buffer.from(protectedHeader, 'ascii')).encrypt(plaintext);
  return {
    protected: protectedHeader,
    iv: bytesToBase64url(iv),
    ciphertext: bytesToBase64url(sealed.subarray(0, sealed.length - TAG)),
    tag: bytesToBase64url(sealed.subarray(sealed.length - TAG)),
    recipients: recipients.map((recipient, i) => {
      const wrapIv = random.subarray(CEK + NONCE * (1 + i), CEK + NONCE * (2 + i));
      return wrapContentKey(cek, wrapIv, sender, recipient);
    }),
  };
}

function wrapContentKey(cek: Uint8Array, iv: Uint8Array, sender: LocalDidKey, recipient: RemoteDidKey): JweRecipient {
  const ephemeral = generateEphemeralX25519();
  const kek = ecdh1puKek(x25519(ephemeral.privateKey, recipient.publicKey), sender.staticSecretWith(recipient));
  const wrapped = xchacha20poly1305(kek, iv).encrypt(cek);
  return {
    encrypted_key: bytesToBase64url(wrapped.subarray(0, CEK)),
    header: {
      iv: bytesToBase64url(iv),
      tag: bytesToBase64url(wrapped.subarray(CEK)),
      kid: recipient.kid,
      alg: KEY_AGREEMENT_ALG,
      epk: { kty: 'OKP', crv: 'X25519', x: ephemeral.x },
    },
  };
}

/**
 * Decrypts with whichever keyring key the JWE names as a recipient. Any failure — malformed input, a sender that is
 * not an Ed25519 did:key, no entry for our keys, a tampered byte anywhere — is a CryptoError whose message says
 * which check failed and never includes key material or content.
 */
export function decryptJwe(input: unknown, keyring: Keyring): DecryptedJwe {
  const jwe = parseJwe(input);
  const sender = senderOf(jwe.protected);
  const { entry, key } = findOurEntry(jwe.recipients, keyring);
  const epk = base64urlToBytes(entry.header.epk.x, 32)!;
  let zE: Buffer;
  try {
    zE = key.sharedSecretWith(x25519PublicKeyObject(epk));
  } catch {
    throw new CryptoError('Cannot decrypt: the ephemeral key of our recipient entry is not a usable X25519 key');
  }
  const kek = ecdh1puKek(zE, key.staticSecretWith(sender));
  const cek = open(kek, entry.header.iv, entry.encrypted_key, entry.header.tag);
  if (!cek) {
    throw new CryptoError(
      'Cannot decrypt: the content key does not unwrap (wrong sender key, or a tampered header or encrypted_key)',
    );
  }
  const plaintext = open(cek, jwe.iv, jwe.ciphertext, jwe.tag, Buffer.from(jwe.protected, 'ascii'));
  if (!plaintext) throw new CryptoError('Cannot decrypt: the content fails authentication (tampered data)');
  return { plaintext, senderDid: sender.did, recipientDid: key.did };
}

function open(key: Uint8Array, iv: string, ciphertext: string, tag: string, aad?: Uint8Array): Uint8Array | undefined {
  const ivBytes = base64urlToBytes(iv, NONCE)!;
  const sealed = Buffer.concat([base64urlToBytes(ciphertext)!, base64urlToBytes(tag, TAG)!]);
  try {
    return xchacha20poly1305(key, ivBytes, aad).decrypt(sealed);
  } catch {
    return undefined;
  }
}

function parseJwe(input: unknown): GeneralJwe {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw malformed('not JSON');
    }
  }
  if (!isObject(value)) throw malformed('not a JSON object');
  // Both would change what the tag authenticates; the network's format has neither.
  if ('aad' in value || 'unprotected' in value) throw malformed('aad and unprotected headers are not supported');
  if (typeof value.protected !== 'string' || !base64urlToBytes(value.protected)) throw malformed('bad protected');
  if (!base64urlToBytes(value.iv, NONCE)) throw malformed('iv must be 24 bytes of base64url');
  if (!base64urlToBytes(value.ciphertext)) throw malformed('ciphertext must be base64url');
  if (!base64urlToBytes(value.tag, TAG)) throw malformed('tag must be 16 bytes of base64url');
  if (!Array.isArray(value.recipients) || value.recipients.length === 0) throw malformed('no recipients');
  return value as unknown as GeneralJwe;
}

function senderOf(protectedHeader: string): RemoteDidKey {
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8'));
  } catch {
    throw malformed('protected header is not JSON');
  }
  if (!isObject(header)) throw malformed('protected header is not an object');
  const extra = Object.keys(header).filter((name) => !['skid', 'typ', 'enc'].includes(name));
  if (extra.length > 0) throw malformed(`unsupported protected header fields: ${extra.join(', ')}`);
  if (header.enc !== JWE_ENC) throw malformed(`protected header enc must be ${JWE_ENC}`);
  if (header.typ !== undefined && header.typ !== JWE_TYP) throw malformed(`protected header typ must be ${JWE_TYP}`);
  if (typeof header.skid !== 'string') throw malformed('protected header has no skid');
  const did = header.skid.split('#')[0]!;
  let sender: RemoteDidKey;
  try {
    sender = remoteDidKey(did, 'skid');
  } catch (e) {
    if (e instanceof ValidationError) {
      throw new CryptoError('Cannot decrypt: the sender (skid) is not an Ed25519 did:key', { rule: e.details.rule });
    }
    throw e;
  }
  if (header.skid !== sender.kid) throw malformed('skid fragment is not the X25519 key of its did');
  return sender;
}

function findOurEntry(recipients: unknown[], keyring: Keyring): { entry: JweRecipient; key: LocalDidKey } {
  const kids: string[] = [];
  for (const entry of recipients) {
    const kid = isObject(entry) && isObject(entry.header) ? entry.header.kid : undefined;
    if (typeof kid !== 'string') throw malformed('a recipient has no header.kid');
    kids.push(kid);
    const key = keyring.findByKid(kid);
    if (key) return { entry: checkEntry(entry as unknown as JweRecipient), key };
  }
  throw new CryptoError('Cannot decrypt: none of our keys is a recipient', { recipients: kids });
}

function checkEntry(entry: JweRecipient): JweRecipient {
  const { header } = entry;
  if (header.alg !== KEY_AGREEMENT_ALG) throw malformed(`recipient alg must be ${KEY_AGREEMENT_ALG}`);
  const epk: unknown = header.epk;
  if (!isObject(epk) || epk.kty !== 'OKP' || epk.crv !== 'X25519' || !base64urlToBytes(epk.x, 32)) {
    throw malformed('recipient epk must be an X25519 OKP key');
  }
  if (!base64urlToBytes(header.iv, NONCE)) throw malformed('recipient iv must be 24 bytes of base64url');
  if (!base64urlToBytes(header.tag, TAG)) throw malformed('recipient tag must be 16 bytes of base64url');
  if (!base64urlToBytes(entry.encrypted_key, CEK)) throw malformed('encrypted_key must be 32 bytes of base64url');
  return entry;
}

function malformed(what: string): CryptoError {
  return new CryptoError(`Cannot decrypt: malformed JWE (${what})`);
}
