import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, ENCRYPTED_ENCODING } from '../../../lib/temporal/codec';
import { parseCodecKeys, formatCodecKey } from '../../../lib/temporal/codec-keys';
import { ConfigError } from '../../../lib/errors';

const key = () => randomBytes(32);

describe('EncryptionCodec', () => {
  const k1 = key();
  const codec = new EncryptionCodec({ currentKeyId: 'k1', keys: new Map([['k1', k1]]) });
  const payload = defaultPayloadConverter.toPayload({ name: 'Alice Example', privateKeyHex: 'ab'.repeat(64) });

  it('encrypts: nothing of the original is readable and the key id travels in metadata', async () => {
    const [enc] = await codec.encode([payload]);
    expect(Buffer.from(enc!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(enc!.metadata!['encryption-key-id']!).toString()).toBe('k1');
    expect(Buffer.from(enc!.data!).includes(Buffer.from('Alice'))).toBe(false);
    const [dec] = await codec.decode([enc!]);
    expect(defaultPayloadConverter.fromPayload(dec!)).toEqual({
      name: 'Alice Example',
      privateKeyHex: 'ab'.repeat(64),
    });
  });

  it('uses a fresh IV per payload', async () => {
    const [a, b] = await codec.encode([payload, payload]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('decrypts history written under a retired key after rotation, and encrypts with the new one', async () => {
    const [old] = await codec.encode([payload]);
    const rotated = new EncryptionCodec({
      currentKeyId: 'k2',
      keys: new Map([
        ['k2', key()],
        ['k1', k1],
      ]),
    });
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!)).toMatchObject({
      name: 'Alice Example',
    });
    const [fresh] = await rotated.encode([payload]);
    expect(Buffer.from(fresh!.metadata!['encryption-key-id']!).toString()).toBe('k2');
  });

  it('refuses an unknown key id, a wrong key and tampered bytes, without echoing the data', async () => {
    const [enc] = await codec.encode([payload]);
    const other = new EncryptionCodec({ currentKeyId: 'k9', keys: new Map([['k9', key()]]) });
    await expect(other.decode([enc!])).rejects.toThrow(/codec key "k1", which is not configured/);
    const impostor = new EncryptionCodec({ currentKeyId: 'k1', keys: new Map([['k1', key()]]) });
    await expect(impostor.decode([enc!])).rejects.toThrow(/failed authentication with codec key "k1"/);
    const tampered = Buffer.from(enc!.data!);
    tampered[20] = tampered[20]! ^ 1;
    await expect(codec.decode([{ ...enc!, data: tampered }])).rejects.toThrow(/failed authentication/);
    await expect(codec.decode([{ ...enc!, data: tampered }])).rejects.not.toThrow(/Alice/);
  });

  it('passes through payloads it did not encrypt (e.g. written before encryption was enabled)', async () => {
    expect(await codec.decode([payload])).toEqual([payload]);
  });
});

describe('parseCodecKeys', () => {
  it('takes the first key as the encrypting one and keeps the others for decryption', () => {
    const a = key();
    const b = key();
    const ring = parseCodecKeys(`${formatCodecKey('new', a)}, ${formatCodecKey('old', b)}`);
    expect(ring.currentKeyId).toBe('new');
    expect([...ring.keys.keys()]).toEqual(['new', 'old']);
  });

  it.each([
    ['', /holds no key/],
    ['nokey', /has no "id:" prefix/],
    [`k1:${Buffer.alloc(16).toString('base64')}`, /is 16 bytes, not 32/],
    [`bad id:${key().toString('base64')}`, /is not \[A-Za-z0-9._-\]/],
    [`k1:${key().toString('base64')},k1:${key().toString('base64')}`, /appears twice/],
  ])('rejects %j with a ConfigError that names the rule', (raw, rule) => {
    expect(() => parseCodecKeys(raw)).toThrow(ConfigError);
    expect(() => parseCodecKeys(raw)).toThrow(rule);
  });

  it('never echoes key material in its errors', () => {
    const secret = key().toString('base64');
    try {
      parseCodecKeys(`k1:${secret}xx`);
    } catch (e) {
      expect((e as Error).message).not.toContain(secret);
    }
  });
});

describe("EncryptionCodec with refuseUnencrypted (the workers' codec)", () => {
  const keyring = { currentKeyId: 'k1', keys: new Map([['k1', randomBytes(32)]]) };
  const strict = new EncryptionCodec(keyring, { refuseUnencrypted: true });
  const lenient = new EncryptionCodec(keyring);
  const plain = defaultPayloadConverter.toPayload({ webhookDays: 0, transferPiiDays: 0 });

  it('refuses a plaintext payload, naming its encoding, where the lenient codec passes it through', async () => {
    await expect(strict.decode([plain])).rejects.toThrow(
      /refused a payload not encrypted by the project's codec.*"json\/plain"/,
    );
    await expect(lenient.decode([plain])).resolves.toEqual([plain]);
    await expect(strict.decode([{ metadata: {}, data: new Uint8Array() }])).rejects.toThrow(/encoding is unset/);
  });

  it('still decodes what the codec encrypted', async () => {
    const enc = await lenient.encode([plain]);
    expect(defaultPayloadConverter.fromPayload((await strict.decode(enc))[0]!)).toEqual({
      webhookDays: 0,
      transferPiiDays: 0,
    });
  });
});
