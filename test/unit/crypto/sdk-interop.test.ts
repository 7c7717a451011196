/**
 * Interoperability with the network's own SDK, `@notabene/pii-sdk` 1.17.2, on a 40-field IVMS101 record.
 *
 * Path used: the SDK's public methods `createKey`, `flattenPII`, `encryptPII`, `decryptPII` and `unflattenPII`,
 * unmodified, in a child Node process (pii-sdk.ts explains why not in-process). Its `generatePIIField` and
 * `getPIIObject` cannot run here because they talk to the network's HTTP service (escrow key, put/get); the helpers
 * `encryptRecordLikeSdk`/`decryptRecordLikeSdk` perform exactly their cryptographic steps with the same recipients
 * (END_2_END: [counterparty]; HYBRID: [escrow, counterparty]; the SDK adds the sender first).
 */
import { createDidKeyRecord, Keyring, type DidKeyRecord } from '../../../lib/crypto';
import { decryptIvms101, encryptIvms101, flattenIvms101, unflattenIvms101 } from '../../../lib/ivms101';
import record from '../../fixtures/pii-sdk/ivms101-40-fields.json';
import { decryptRecordLikeSdk, encryptRecordLikeSdk, startPiiSdk, type SdkKeyPair } from './pii-sdk';

jest.setTimeout(60_000);

const sdk = startPiiSdk();
afterAll(() => sdk.stop());

const recipientsOf = (jwe: string) =>
  JSON.parse(jwe).recipients.map((r: { header: { kid: string } }) => r.header.kid.split('#')[0]);

describe('the flattened form is the SDK’s', () => {
  it('flattens to the same keys, values and order as flattenPII', async () => {
    const ours = flattenIvms101(record);
    expect(ours).toHaveLength(40);
    expect(ours).toEqual(await sdk.flattenPII(record));
  });

  it('unflattens to the same tree as unflattenPII', async () => {
    const flat = flattenIvms101(record);
    expect(unflattenIvms101(flat)).toEqual(await sdk.unflattenPII(flat));
    expect(unflattenIvms101(flat)).toEqual(record);
  });
});

describe.each([
  ['end-to-end (2 recipients)', false],
  ['hybrid (3 recipients)', true],
])('%s', (_mode, hybrid) => {
  let sdkSender: SdkKeyPair;
  let sdkEscrow: SdkKeyPair;
  let sdkCounterparty: SdkKeyPair;
  let ourSender: DidKeyRecord;
  let ourEscrow: DidKeyRecord;
  let ourCounterparty: DidKeyRecord;

  beforeAll(async () => {
    [sdkSender, sdkEscrow, sdkCounterparty] = [await sdk.createKey(), await sdk.createKey(), await sdk.createKey()];
    [ourSender, ourEscrow, ourCounterparty] = [createDidKeyRecord(), createDidKeyRecord(), createDidKeyRecord()];
  });

  it('the SDK encrypts, we decrypt as every recipient', async () => {
    const others = hybrid ? [ourEscrow.did, ourCounterparty.did] : [ourCounterparty.did];
    const entries = await encryptRecordLikeSdk(sdk, record, sdkSender, others);
    expect(entries).toHaveLength(40);
    expect(recipientsOf(entries[0]!.value)).toEqual([sdkSender.did, ...others]);
    const readers: unknown[] = hybrid ? [sdkSender, ourEscrow, ourCounterparty] : [sdkSender, ourCounterparty];
    for (const reader of readers) {
      const result = decryptIvms101(entries, Keyring.from([reader]));
      expect(result.record).toEqual(record);
      expect(result.senderDid).toBe(sdkSender.did);
    }
    expect(() => decryptIvms101(entries, Keyring.from([createDidKeyRecord()]))).toThrow(
      /none of our keys is a recipient/,
    );
  });

  it('we encrypt, the SDK decrypts as every recipient', async () => {
    const others = hybrid ? [sdkEscrow.did, sdkCounterparty.did] : [sdkCounterparty.did];
    const entries = encryptIvms101(record, ourSender, others);
    expect(entries.map((e) => e.key)).toEqual(flattenIvms101(record).map((e) => e.key));
    expect(recipientsOf(entries[0]!.value)).toEqual([ourSender.did, ...others]);
    const readers: unknown[] = hybrid ? [ourSender, sdkEscrow, sdkCounterparty] : [ourSender, sdkCounterparty];
    for (const reader of readers) {
      expect(await decryptRecordLikeSdk(sdk, entries, reader)).toEqual(record);
    }
    await expect(
      sdk.decryptPII({ encryptedMessage: entries[0]!.value, keypair: await sdk.createKey() }),
    ).rejects.toThrow(/unable to decrypt/);
  });

  it('an SDK-made key record sends with our code and the SDK reads it', async () => {
    const others = hybrid ? [sdkEscrow.did, ourCounterparty.did] : [ourCounterparty.did];
    const entries = encryptIvms101(record, sdkSender, others);
    expect(decryptIvms101(entries, Keyring.from([ourCounterparty])).record).toEqual(record);
    expect(await decryptRecordLikeSdk(sdk, entries.slice(0, 3), hybrid ? sdkEscrow : sdkSender)).toEqual(
      unflattenIvms101(flattenIvms101(record).slice(0, 3)),
    );
  });

  it('sizes match the SDK’s (about 1.3 KB per field with 2 recipients, 1.7 KB with 3)', async () => {
    const others = hybrid ? [sdkEscrow.did, sdkCounterparty.did] : [sdkCounterparty.did];
    const theirs = await encryptRecordLikeSdk(sdk, record, sdkSender, others);
    const ours = encryptIvms101(record, sdkSender, others);
    // Same key, same plaintext length, fixed-size fields: only the id's timestamp can differ in length (never here).
    expect(ours.map((e) => e.value.length)).toEqual(theirs.map((e) => e.value.length));
    const perField = ours.reduce((n, e) => n + e.value.length, 0) / ours.length;
    expect(perField).toBeGreaterThan(hybrid ? 1500 : 1100);
    expect(perField).toBeLessThan(hybrid ? 1900 : 1500);
  });
});
