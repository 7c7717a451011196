import { CryptoError, ValidationError } from '../../../lib/errors';
import { createDidKeyRecord, decryptPiiValue, jweKidFromDid, Keyring, localDidKey } from '../../../lib/crypto';
import { decryptIvms101, encryptIvms101, flattenIvms101 } from '../../../lib/ivms101';
import record from '../../fixtures/pii-sdk/ivms101-40-fields.json';

const sender = createDidKeyRecord();
const escrow = createDidKeyRecord();
const counterparty = createDidKeyRecord();
const kidsOf = (jwe: string) => JSON.parse(jwe).recipients.map((r: { header: { kid: string } }) => r.header.kid);

function caught(fn: () => unknown): Error & { details?: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('encryptIvms101', () => {
  it('encrypts each flattened value for [sender, escrow, counterparty] in hybrid mode', () => {
    const entries = encryptIvms101(record, sender, [escrow.did, counterparty.did], { now: 1_700_000_000_000 });
    expect(entries.map((e) => e.key)).toEqual(flattenIvms101(record).map((e) => e.key));
    for (const entry of entries) {
      expect(kidsOf(entry.value)).toEqual([sender, escrow, counterparty].map((r) => jweKidFromDid(r.did)));
    }
    const keyring = Keyring.from([escrow]);
    expect(entries.map((e) => decryptPiiValue(e.value, keyring).body)).toEqual(
      flattenIvms101(record).map((e) => e.value),
    );
  });

  it('takes the sender as a key record or as an already prepared key', () => {
    const entries = encryptIvms101(record, localDidKey(sender), [counterparty.did]);
    expect(decryptIvms101(entries, Keyring.from([counterparty]))).toEqual({ record, senderDid: sender.did });
  });

  it('refuses invalid IVMS101 before encrypting anything, naming the field', () => {
    const bad = structuredClone(record) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    bad.originator.originatorPersons[0].naturalPerson.nickname = 'Mr Underhill';
    const error = caught(() => encryptIvms101(bad, sender, [counterparty.did]));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe(
      'originator.originatorPersons[0].naturalPerson.nickname: is not an IVMS101 field (unknown fields are rejected, not dropped)',
    );
    expect(error.message).not.toContain('Underhill');
  });

  it('refuses values the network format would silently lose', () => {
    const withPath = {
      ...record,
      transferPath: { transferPath: [{ intermediaryVASP: record.originatingVASP.originatingVASP, sequence: 0 }] },
    };
    const error = caught(() => encryptIvms101(withPath, sender, [counterparty.did]));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.details?.field).toBe('transferPath.transferPath[0].sequence');
  });

  it('refuses a bad sender record or recipient, naming it', () => {
    const spliced = { ...structuredClone(sender), did: counterparty.did };
    expect(caught(() => encryptIvms101(record, spliced, [counterparty.did])).details?.field).toBe(
      'sender.keys[0].publicKeyHex',
    );
    expect(
      caught(() =>
        encryptIvms101(record, sender, [escrow.did, 'did:key:z6LSbysY2xFMRpGMhb7tFTLMpeuPRaqaWM1yECx2AtzE3KCc']),
      ).details?.field,
    ).toBe('recipients[1]');
  });
});

describe('decryptIvms101', () => {
  const entries = encryptIvms101(record, sender, [counterparty.did]);

  it('rebuilds the record and reports the proven sender', () => {
    expect(decryptIvms101(entries, Keyring.from([counterparty]))).toEqual({ record, senderDid: sender.did });
    expect(decryptIvms101(entries, Keyring.from([sender])).record).toEqual(record);
  });

  it('returns an empty record for no entries', () => {
    expect(decryptIvms101([], Keyring.from([counterparty]))).toEqual({ record: {}, senderDid: undefined });
  });

  it('refuses values from different senders spliced into one record', () => {
    const other = encryptIvms101(record, escrow, [counterparty.did]);
    const mixed = [...entries.slice(0, 5), other[5]!, ...entries.slice(6)];
    const error = caught(() => decryptIvms101(mixed, Keyring.from([counterparty])));
    expect(error).toBeInstanceOf(CryptoError);
    expect(error.details?.field).toBe('entries[5]');
  });

  it('refuses a tampered value, and a malformed key before decrypting anything', () => {
    const tampered = structuredClone(entries);
    const jwe = JSON.parse(tampered[3]!.value);
    jwe.ciphertext =
      `A${jwe.ciphertext.slice(1)}` === jwe.ciphertext ? `B${jwe.ciphertext.slice(1)}` : `A${jwe.ciphertext.slice(1)}`;
    tampered[3]!.value = JSON.stringify(jwe);
    expect(caught(() => decryptIvms101(tampered, Keyring.from([counterparty])))).toBeInstanceOf(CryptoError);

    const badKey = structuredClone(entries);
    badKey[39]!.key = '__proto__.x';
    const error = caught(() => decryptIvms101(badKey, Keyring.from([counterparty])));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.details?.field).toBe('entries[39].key');
  });

  it('refuses a keyring that was not among the recipients', () => {
    expect(caught(() => decryptIvms101(entries, Keyring.from([escrow])))).toBeInstanceOf(CryptoError);
  });
});
