/**
 * One encrypted personal-data value as the network stores it: a DIDComm-style message whose `body` is one flattened
 * IVMS101 string, encrypted (jwe.ts) for the sender itself first and then for the other recipients. Mirrors the vendor
 * SDK's `encryptPII`/`decryptPII`, with the checks the SDK skips on the way back in: the message must come from the
 * key that authenticated it, and be the expected message type.
 */
import { CryptoError, ValidationError } from '../errors';
import { decryptJwe, encryptJwe } from './jwe';
import type { Keyring } from './keyring';
import { remoteDidKey, type LocalDidKey, type RemoteDidKey } from './prepared-keys';

export const PII_MESSAGE_TYPE = 'notabene.escrow.pii.message';
/** The SDK writes `escriw`; the id is never interpreted, but keeping it makes our output indistinguishable. */
export const PII_MESSAGE_ID_PREFIX = 'notabene.escriw.pii-';

export interface PiiMessage {
  type: typeof PII_MESSAGE_TYPE;
  from: string;
  id: string;
  body: string;
}

/**
 * The recipients in the network's order: the sender first, so it can always read its own data, then the others
 * (hybrid: escrow, then counterparty). A repeated did is encrypted for once.
 */
export function piiRecipients(sender: LocalDidKey, recipientDids: readonly string[]): RemoteDidKey[] {
  if (!Array.isArray(recipientDids)) throw new ValidationError('recipients', 'must be an array of did:key strings');
  const keys = [remoteDidKey(sender.did, 'sender.did')];
  recipientDids.forEach((did, i) => {
    const key = remoteDidKey(did, `recipients[${i}]`);
    if (!keys.some((known) => known.did === key.did)) keys.push(key);
  });
  return keys;
}

/** Returns the JWE as the JSON string the network stores. `now` (ms) only feeds the message id. */
export function encryptPiiValue(
  body: string,
  sender: LocalDidKey,
  recipients: readonly RemoteDidKey[],
  now: number = Date.now(),
): string {
  const message: PiiMessage = { type: PII_MESSAGE_TYPE, from: sender.did, id: `${PII_MESSAGE_ID_PREFIX}${now}`, body };
  return JSON.stringify(encryptJwe(Buffer.from(JSON.stringify(message), 'utf8'), sender, recipients));
}

export interface DecryptedPiiValue {
  body: string;
  /** The sender's did:key, proven by the authenticated encryption. */
  from: string;
}

export function decryptPiiValue(jwe: unknown, keyring: Keyring): DecryptedPiiValue {
  const { plaintext, senderDid } = decryptJwe(jwe, keyring);
  let message: unknown;
  try {
    message = JSON.parse(Buffer.from(plaintext).toString('utf8'));
  } catch {
    throw new CryptoError('Decrypted message is not JSON');
  }
  if (typeof message !== 'object' || message === null) throw new CryptoError('Decrypted message is not an object');
  const { type, from, body } = message as Record<string, unknown>;
  if (type !== PII_MESSAGE_TYPE) throw new CryptoError(`Decrypted message type is not ${PII_MESSAGE_TYPE}`);
  // The SDK never compares these; without the check a holder of one key could claim to be another sender.
  if (from !== senderDid) throw new CryptoError('Decrypted message "from" does not match the sender key (skid)');
  if (typeof body !== 'string') throw new CryptoError('Decrypted message body is not a string');
  return { body, from: senderDid };
}
