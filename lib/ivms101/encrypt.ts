/**
 * IVMS101 records in and out of the network's encrypted form: one JWE per flattened string, each readable by the
 * sender and by every recipient — what the vendor SDK's `generatePIIField` sends to the personal-data service, and
 * what `getPIIObject` turns back into a record.
 */
import { CryptoError, ValidationError } from '../errors';
import type { DidKeyRecord } from '../crypto/didkey';
import type { Keyring } from '../crypto/keyring';
import { decryptPiiValue, encryptPiiValue, piiRecipients } from '../crypto/pii-message';
import { LocalDidKey } from '../crypto/prepared-keys';
import { flattenIvms101, lossyLeaves, parseFlatKey, unflattenIvms101, type FlatEntry } from './flatten';
import { assertValidIvms101 } from './validate';

export interface EncryptIvms101Options {
  /** Milliseconds for the message ids; defaults to now. */
  now?: number;
}

/**
 * Validates `record` as IVMS101 (ValidationError naming the field), then encrypts every flattened value for the
 * sender and `recipients` (did:key strings; hybrid mode passes `[escrow, counterparty]`). `sender` is the sender's
 * JsonDIDKey record, private key included (validated; ValidationError names `sender.…`), or its prepared LocalDidKey.
 */
export function encryptIvms101(
  record: unknown,
  sender: DidKeyRecord | LocalDidKey | unknown,
  recipients: readonly string[],
  options: EncryptIvms101Options = {},
): FlatEntry[] {
  assertValidIvms101(record);
  const [lossy] = lossyLeaves(record);
  if (lossy) {
    throw new ValidationError(lossy, "cannot be encrypted: the network's personal-data format carries strings only");
  }
  const senderKey = sender instanceof LocalDidKey ? sender : LocalDidKey.from(sender, 'sender');
  const keys = piiRecipients(senderKey, recipients);
  const now = options.now ?? Date.now();
  return flattenIvms101(record).map(({ key, value }) => ({ key, value: encryptPiiValue(value, senderKey, keys, now) }));
}

export interface DecryptedIvms101 {
  /** The rebuilt tree, not validated: a counterparty's data is returned as sent, for the caller to judge. */
  record: Record<string, unknown>;
  /** The did:key that authenticated every value; undefined when there were no entries. */
  senderDid: string | undefined;
}

/**
 * Decrypts flattened entries with any key of `keyring` and rebuilds the record. All values must come from one sender:
 * a record spliced together from several senders' values is refused. The keys themselves are not protected by the
 * network's format (only values are encrypted), so they are checked for shape, not authenticity.
 */
export function decryptIvms101(entries: readonly FlatEntry[], keyring: Keyring): DecryptedIvms101 {
  if (!Array.isArray(entries)) throw new ValidationError('entries', 'must be an array of {key, value}');
  // Cheap shape checks first, so malformed input costs no decryption.
  entries.forEach((entry, i) => {
    if (!parseFlatKey((entry as Partial<FlatEntry> | null)?.key)) {
      throw new ValidationError(`entries[${i}].key`, 'must be an IVMS101 path such as originator.originatorPersons[0]');
    }
  });
  let senderDid: string | undefined;
  const plain = entries.map(({ key, value }, i) => {
    const { body, from } = decryptPiiValue(value, keyring);
    if (senderDid !== undefined && from !== senderDid) {
      throw new CryptoError('Cannot decrypt: the values come from different senders', { field: `entries[${i}]` });
    }
    senderDid = from;
    return { key, value: body };
  });
  return { record: unflattenIvms101(plain), senderDid };
}
