import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec, ValueError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/**
 * AES-256-GCM payload codec. Every payload a Client or Worker sends to Temporal (workflow and activity inputs and
 * results, signals, queries, updates, memos, and failure messages through the failure converter) leaves the process
 * encrypted, so workflow history holds no personal data, key material or CSV contents in plaintext.
 *
 * Wire shape (the one Temporal's encryption sample uses, so the UI's codec endpoint and other SDKs can read it):
 * metadata `encoding: binary/encrypted`, `encryption-key-id: <id>`; data = iv(12) ‖ ciphertext ‖ tag(16) of the
 * protobuf-serialised original Payload.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';
const IV_LENGTH = 12;
const TAG_LENGTH = 16;

export interface CodecKeyring {
  /** Id of the key new payloads are encrypted with. */
  currentKeyId: string;
  /** Every key that may still be needed to decrypt history: the current one and retired ones. */
  keys: ReadonlyMap<string, Buffer>;
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const fromUtf8 = (b: Uint8Array) => new TextDecoder().decode(b);

export interface CodecOptions {
  /**
   * Refuse payloads this codec did not encrypt instead of passing them through: what a worker needs, since anyone who
   * can reach the Temporal server could otherwise start a workflow (or signal one) with plaintext input of their
   * choosing. Search attributes and headers never reach the codec (Temporal reads them itself), so they stay plain.
   * The API's codec endpoint leaves it off: the UI asks it to decode whatever history holds.
   */
  refuseUnencrypted?: boolean;
}

/** The message of the refusal, which the worker's failed workflow task carries. */
export const UNENCRYPTED_REFUSED =
  "refused a payload not encrypted by the project's codec (binary/encrypted): start workflows and send signals through a client with the codec (TEMPORAL_CODEC_KEYS)";

export class EncryptionCodec implements PayloadCodec {
  private readonly currentKey: Buffer;

  constructor(
    private readonly keyring: CodecKeyring,
    private readonly options: CodecOptions = {},
  ) {
    const current = keyring.keys.get(keyring.currentKeyId);
    if (!current) throw new ValueError(`codec key ${keyring.currentKeyId} is not in the keyring`);
    this.currentKey = current;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(IV_LENGTH);
      const cipher = createCipheriv('aes-256-gcm', this.currentKey, iv);
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING),
          [METADATA_ENCRYPTION_KEY_ID]: utf8(this.keyring.currentKeyId),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
      if (!encoding || fromUtf8(encoding) !== ENCRYPTED_ENCODING) {
        if (this.options.refuseUnencrypted)
          throw new ValueError(
            `${UNENCRYPTED_REFUSED}; its encoding is ${encoding ? `"${fromUtf8(encoding).slice(0, 40)}"` : 'unset'}`,
          );
        return payload;
      }
      const keyIdBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
      if (!keyIdBytes) throw new ValueError('encrypted payload has no encryption-key-id');
      const keyId = fromUtf8(keyIdBytes);
      const key = this.keyring.keys.get(keyId);
      if (!key) {
        throw new ValueError(
          `payload was encrypted with codec key "${keyId}", which is not configured; add it to TEMPORAL_CODEC_KEYS`,
        );
      }
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_LENGTH + TAG_LENGTH) throw new ValueError('encrypted payload is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_LENGTH));
      decipher.setAuthTag(data.subarray(data.length - TAG_LENGTH));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(IV_LENGTH, data.length - TAG_LENGTH)), decipher.final()]);
      } catch {
        throw new ValueError(`payload failed authentication with codec key "${keyId}" (wrong key or tampered data)`);
      }
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}
