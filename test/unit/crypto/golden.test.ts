/**
 * Golden vectors made by `@notabene/pii-sdk` 1.17.2 (test/fixtures/pii-sdk/make-golden.ts). They pin the wire format:
 * if our decryption, the key-record parsing or the flattening drifts from what the network's SDK produced, this fails.
 */
import { jweKidFromDid, Keyring, parseDidKeyRecord } from '../../../lib/crypto';
import { decryptIvms101, flattenIvms101 } from '../../../lib/ivms101';
import golden from '../../fixtures/pii-sdk/golden.json';

const { sender, escrow, counterparty } = golden.keys;

describe('golden vectors from the SDK', () => {
  it('holds key records our parser accepts unchanged', () => {
    for (const key of [sender, escrow, counterparty]) expect(parseDidKeyRecord(key)).toEqual(key);
  });

  it('uses our flattened keys, in our order', () => {
    const keys = flattenIvms101(golden.record).map((e) => e.key);
    expect(golden.endToEnd.entries.map((e) => e.key)).toEqual(keys);
    expect(golden.hybrid.entries.map((e) => e.key)).toEqual(keys);
    expect(keys).toHaveLength(40);
  });

  it.each([
    ['end-to-end', golden.endToEnd, [sender, counterparty]],
    ['hybrid', golden.hybrid, [sender, escrow, counterparty]],
  ])('%s: has the pinned JWE structure', (_mode, { entries }, recipients) => {
    for (const { value } of entries) {
      const jwe = JSON.parse(value);
      expect(Object.keys(jwe)).toEqual(['protected', 'iv', 'ciphertext', 'tag', 'recipients']);
      expect(Buffer.from(jwe.protected, 'base64url').toString()).toBe(
        `{"skid":"${jweKidFromDid(sender.did)}","typ":"application/didcomm-encrypted+json","enc":"XC20P"}`,
      );
      expect(jwe.recipients.map((r: { header: { kid: string } }) => r.header.kid)).toEqual(
        recipients.map((r) => jweKidFromDid(r.did)),
      );
      for (const r of jwe.recipients) {
        expect(r.header.alg).toBe('ECDH-1PU+XC20PKW');
        expect(Buffer.from(r.encrypted_key, 'base64url')).toHaveLength(32);
      }
    }
  });

  it.each([
    ['end-to-end', golden.endToEnd, [sender, counterparty]],
    ['hybrid', golden.hybrid, [sender, escrow, counterparty]],
  ])('%s: every recipient decrypts the whole record with our code', (_mode, { entries }, readers) => {
    for (const reader of readers) {
      const result = decryptIvms101(entries, Keyring.from([reader]));
      expect(result.record).toEqual(golden.record);
      expect(result.senderDid).toBe(sender.did);
    }
  });

  it('end-to-end data is unreadable by the escrow key (it was never a recipient)', () => {
    expect(() => decryptIvms101(golden.endToEnd.entries, Keyring.from([escrow]))).toThrow(
      /none of our keys is a recipient/,
    );
  });
});
