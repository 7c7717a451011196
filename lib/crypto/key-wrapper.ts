/**
 * Envelope encryption for the keystore: each private key is sealed under its own random data key, and only the data
 * key is wrapped under the master key. `KeyWrapper` is the seam a KMS (AWS KMS Encrypt/Decrypt with an encryption
 * context, GCP KMS with additional authenticated data, Vault transit) implements later; `LocalKeyWrapper` does the
 * same with a master key from the environment.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, CryptoError } from '../errors';

export interface KeyWrapper {
  /** Id of the key new data keys are wrapped under (stored with each row, so a later master key can coexist). */
  readonly keyId: string;
  /** Wraps a data key. `context` is authenticated, not secret: unwrapping with another context fails. */
  wrap(dataKey: Uint8Array, context: string): Promise<Uint8Array>;
  unwrap(wrapped: Uint8Array, keyId: string, context: string): Promise<Uint8Array>;
}

const IV = 12;
const TAG = 16;
const VERSION = 1;

/** AES-256-GCM: version(1) ‖ iv(12) ‖ ciphertext ‖ tag(16), with `aad` authenticated. */
export function aesGcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: string): Buffer {
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([Buffer.of(VERSION), iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** Opens `aesGcmSeal` output; throws CryptoError (never quoting data) when the key, the aad or the bytes are wrong. */
export function aesGcmOpen(key: Uint8Array, sealed: Uint8Array, aad: string, what: string): Buffer {
  const data = Buffer.from(sealed);
  if (data.length < 1 + IV + TAG || data[0] !== VERSION)
    throw new CryptoError(`${what} is not in the keystore's sealed format`);
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(1, 1 + IV));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(data.subarray(data.length - TAG));
  try {
    return Buffer.concat([decipher.update(data.subarray(1 + IV, data.length - TAG)), decipher.final()]);
  } catch {
    throw new CryptoError(`${what} failed authentication (wrong key, or the row was altered)`);
  }
}

/** Wraps data keys with AES-256-GCM under a 32-byte master key held in this process. */
export class LocalKeyWrapper implements KeyWrapper {
  readonly keyId: string;
  readonly #masterKey: Buffer;

  constructor(masterKey: Uint8Array) {
    if (masterKey.length !== 32)
      throw new ConfigError('KEYSTORE_MASTER_KEY', `is ${masterKey.length} bytes, not 32`, FIX);
    this.#masterKey = Buffer.from(masterKey);
    // A fingerprint, not the key: lets an operator see which master key a row needs when the configured one differs.
    this.keyId = `local:${createHash('sha256').update('tro-keystore-master-key-id').update(this.#masterKey).digest('hex').slice(0, 16)}`;
  }

  async wrap(dataKey: Uint8Array, context: string): Promise<Uint8Array> {
    return aesGcmSeal(this.#masterKey, dataKey, `wrap|${context}`);
  }

  async unwrap(wrapped: Uint8Array, keyId: string, context: string): Promise<Uint8Array> {
    if (keyId !== this.keyId) {
      throw new ConfigError(
        'KEYSTORE_MASTER_KEY',
        `a stored key is wrapped under master key ${keyId}, but the configured one is ${this.keyId}`,
        'Configure the master key the keystore was created with',
      );
    }
    return aesGcmOpen(this.#masterKey, wrapped, `wrap|${context}`, 'wrapped data key');
  }

  /** Keeps the master key out of logs and JSON dumps. */
  toJSON(): { keyId: string } {
    return { keyId: this.keyId };
  }
}

const FIX = 'Set KEYSTORE_MASTER_KEY to the base64 of 32 random bytes, e.g. `openssl rand -base64 32`';

/** Parses `KEYSTORE_MASTER_KEY` (base64 of exactly 32 bytes). Messages never quote the value. */
export function parseMasterKey(raw: string, setting = 'KEYSTORE_MASTER_KEY'): Buffer {
  const text = raw.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) && !/^[A-Za-z0-9_-]+$/.test(text)) {
    throw new ConfigError(setting, 'is not base64', FIX);
  }
  const encoding = text.includes('-') || text.includes('_') ? 'base64url' : 'base64';
  const key = Buffer.from(text, encoding);
  if (key.toString(encoding).replace(/=+$/, '') !== text.replace(/=+$/, ''))
    throw new ConfigError(setting, 'is not canonical base64', FIX);
  if (key.length !== 32) throw new ConfigError(setting, `decodes to ${key.length} bytes, not 32`, FIX);
  return key;
}

/**
 * The master key for this process: `KEYSTORE_MASTER_KEY` when set; otherwise a development key kept in
 * `<dataDir>/keystore-master-key` (created on first start with mode 0600, git-ignored), so `npm start` works with
 * nothing configured and a restart still opens the keys it stored. The file is created atomically (write a temporary
 * file, then link it into place), so an API and a worker starting together agree on one key.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return parseMasterKey(configured);
  const file = `${dataDir}/keystore-master-key`;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  return parseMasterKey(readFileSync(file, 'utf8'), file);
}

export function keyWrapperFromConfig(configured: string | undefined, dataDir: string): KeyWrapper {
  return new LocalKeyWrapper(loadMasterKey(configured, dataDir));
}
