import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { base58btc } from 'multiformats/bases/base58';
import { ValidationError } from '../../../lib/errors';
import {
  createDidKeyRecord,
  didFromEd25519PublicKey,
  ed25519PublicKeyFromDid,
  jweKidFromDid,
  parseDidKey,
  parseDidKeyRecord,
  parsePublicDidKeyRecord,
  toPublicDidKeyRecord,
  x25519PublicKeyFromDid,
  x25519SecretFromSeed,
  type DidKeyRecord,
} from '../../../lib/crypto/didkey';
import golden from '../../fixtures/pii-sdk/golden.json';
import { startPiiSdk } from './pii-sdk';

const sdk = startPiiSdk();
afterAll(() => sdk.stop());

const SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const fromBytes = (prefix: number[], key: Uint8Array) =>
  `did:key:${base58btc.encode(Uint8Array.from([...prefix, ...key]))}`;
const clone = <T>(value: T): T => structuredClone(value);

function expectValidationError(fn: () => unknown, field: string, rule: RegExp): ValidationError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ValidationError);
  const error = caught as ValidationError;
  expect(error.details.field).toBe(field);
  expect(error.details.rule).toMatch(rule);
  return error;
}

describe('createDidKeyRecord', () => {
  it('produces the exact JsonDIDKey shape with priv‖pub private key and the did:key of the public key', () => {
    const record = createDidKeyRecord(SEED);
    const pub = ed25519.getPublicKey(SEED);
    const pubHex = Buffer.from(pub).toString('hex');
    expect(record).toEqual({
      did: `did:key:z${base58btcRaw([0xed, 0x01, ...pub])}`,
      controllerKeyId: pubHex,
      keys: [
        {
          type: 'Ed25519',
          kid: pubHex,
          publicKeyHex: pubHex,
          meta: { algorithms: ['Ed25519', 'EdDSA'] },
          kms: 'local',
          privateKeyHex: Buffer.from(SEED).toString('hex') + pubHex,
        },
      ],
      services: [],
      provider: 'did:key',
    });
    expect(record.did.startsWith('did:key:z6Mk')).toBe(true);
    // Same key order as the SDK's records, so serialised records are indistinguishable.
    expect(Object.keys(record)).toEqual(Object.keys(golden.keys.sender));
    expect(Object.keys(record.keys[0])).toEqual(Object.keys(golden.keys.sender.keys[0]!));
  });

  it('makes a different key each time without a seed', () => {
    expect(createDidKeyRecord().did).not.toBe(createDidKeyRecord().did);
  });
});

describe('key records move both ways between the SDK and us', () => {
  it('parses SDK-made records unchanged', async () => {
    for (let i = 0; i < 5; i++) {
      const sdkRecord = await sdk.createKey();
      expect(parseDidKeyRecord(clone(sdkRecord))).toEqual(sdkRecord);
    }
  });

  it('our records are usable by the SDK: it encrypts with ours, and decrypts for ours', async () => {
    const ours = createDidKeyRecord();
    const theirs = await sdk.createKey();
    const fromUs = await sdk.encryptPII({
      senderDIDKey: ours.did,
      recipientDIDkeys: [theirs.did],
      body: 'Frodo',
      keypair: ours,
    });
    expect(await sdk.decryptPII({ encryptedMessage: fromUs, keypair: theirs })).toBe('Frodo');
    expect(await sdk.decryptPII({ encryptedMessage: fromUs, keypair: ours })).toBe('Frodo');
  });

  it('derives the same X25519 kid the SDK writes into its JWEs', () => {
    const entry = JSON.parse(golden.endToEnd.entries[0]!.value);
    const kids = entry.recipients.map((r: { header: { kid: string } }) => r.header.kid);
    expect(kids).toEqual([jweKidFromDid(golden.keys.sender.did), jweKidFromDid(golden.keys.counterparty.did)]);
    expect(JSON.parse(Buffer.from(entry.protected, 'base64url').toString()).skid).toBe(
      jweKidFromDid(golden.keys.sender.did),
    );
  });
});

describe('did helpers', () => {
  const record = createDidKeyRecord(SEED);
  const pub = ed25519.getPublicKey(SEED);

  it('round-trips did ↔ Ed25519 public key', () => {
    expect(didFromEd25519PublicKey(pub)).toBe(record.did);
    expect(ed25519PublicKeyFromDid(record.did)).toEqual(pub);
    expect(parseDidKey(record.did)).toEqual({ did: record.did, ed25519PublicKey: pub });
  });

  it('converts to X25519 so that both sides agree on the shared secret', () => {
    const other = ed25519.utils.randomSecretKey();
    const otherDid = didFromEd25519PublicKey(ed25519.getPublicKey(other));
    const ab = x25519.getSharedSecret(x25519SecretFromSeed(SEED), x25519PublicKeyFromDid(otherDid));
    const ba = x25519.getSharedSecret(x25519SecretFromSeed(other), x25519PublicKeyFromDid(record.did));
    expect(Buffer.from(ab).equals(Buffer.from(ba))).toBe(true);
    expect(x25519PublicKeyFromDid(record.did)).toEqual(x25519.getPublicKey(x25519SecretFromSeed(SEED)));
  });

  it('builds the JWE kid from the X25519 key (multicodec 0xec 0x01)', () => {
    const kid = jweKidFromDid(record.did);
    const [did, fragment] = kid.split('#');
    expect(did).toBe(record.did);
    expect(fragment!.startsWith('z6LS')).toBe(true);
    expect(base58btc.decode(fragment!)).toEqual(Uint8Array.from([0xec, 0x01, ...x25519PublicKeyFromDid(record.did)]));
  });
});

describe('parseDidKey refuses what is not an Ed25519 did:key', () => {
  const good = createDidKeyRecord(SEED).did;
  const pub = ed25519.getPublicKey(SEED);
  const cases: Array<[string, unknown, RegExp]> = [
    ['not a string', 42, /Ed25519/],
    ['another DID method', 'did:web:example.com', /did:key/],
    ['missing multibase prefix', good.replace('did:key:z', 'did:key:'), /base58btc multibase/],
    ['base64 multibase', `did:key:m${Buffer.from([0xed, 0x01, ...pub]).toString('base64')}`, /base58btc multibase/],
    ['a fragment', `${good}#key-1`, /no fragment/],
    ['invalid base58 characters', good.slice(0, -1) + '0', /base58btc multibase/],
    ['a 31-byte key', fromBytes([0xed, 0x01], pub.subarray(0, 31)), /must be 48 characters, got 4[67]/],
    ['a 33-byte key', fromBytes([0xed, 0x01], Uint8Array.from([...pub, 0])), /must be 48 characters, got 49/],
    ['an X25519 key (z6LS…)', fromBytes([0xec, 0x01], x25519PublicKeyFromDid(good)), /holds an X25519 key/],
    ['a secp256k1 key', fromBytes([0xe7, 0x01], Uint8Array.from([2, ...pub])), /must be 48 characters, got 49/],
    // Refused by its length before any base58 decoding, whose cost grows with the square of the length.
    [
      'an oversized key (100,000 characters)',
      `did:key:z6Mk${'2'.repeat(100_000)}`,
      /must be 48 characters, got 100004/,
    ],
    ['an unknown codec', fromBytes([0x99, 0x01], pub), /unsupported key type/],
    ['a point off the curve', fromBytes([0xed, 0x01], new Uint8Array(32).fill(0xff)), /not a valid Ed25519 point/],
    ['a small-order point', fromBytes([0xed, 0x01], Uint8Array.from([1, ...new Uint8Array(31)])), /not a valid/],
  ];

  it.each(cases)('refuses %s', (_name, did, rule) => {
    expectValidationError(() => parseDidKey(did, 'recipients[0]'), 'recipients[0]', rule);
  });

  it('checks that the SDK accepts the X25519 did:key we refuse (the laxness we guard against)', async () => {
    const sender = await sdk.createKey();
    const x25519Did = fromBytes([0xec, 0x01], x25519PublicKeyFromDid(good));
    await expect(
      sdk.encryptPII({ senderDIDKey: sender.did, recipientDIDkeys: [x25519Did], body: 'x', keypair: sender }),
    ).resolves.toEqual(expect.any(String));
  });
});

describe('parseDidKeyRecord is stricter than the SDK', () => {
  const record = createDidKeyRecord(SEED);
  const other = createDidKeyRecord();
  const mutate = (change: (r: DidKeyRecord) => void) => {
    const copy = clone(record);
    change(copy);
    return copy;
  };

  it('accepts upper-case hex and returns canonical lower case', () => {
    const upper = mutate((r) => {
      r.keys[0].privateKeyHex = r.keys[0].privateKeyHex.toUpperCase();
      r.keys[0].publicKeyHex = r.keys[0].publicKeyHex.toUpperCase();
    });
    expect(parseDidKeyRecord(upper)).toEqual(record);
  });

  const cases: Array<[string, unknown, string, RegExp]> = [
    ['not an object', 'did:key:z6Mk', 'didKey', /JsonDIDKey/],
    [
      'another provider',
      mutate((r) => ((r as { provider: string }).provider = 'did:ethr')),
      'didKey.provider',
      /did:key/,
    ],
    [
      'a non-Ed25519 did',
      mutate((r) => (r.did = fromBytes([0xec, 0x01], x25519PublicKeyFromDid(record.did)))),
      'didKey.did',
      /X25519/,
    ],
    ['two keys', mutate((r) => (r.keys as unknown[]).push(clone(r.keys[0]))), 'didKey.keys', /exactly one/],
    [
      'a key of another type',
      mutate((r) => ((r.keys[0] as { type: string }).type = 'X25519')),
      'didKey.keys[0].type',
      /Ed25519/,
    ],
    [
      'a short publicKeyHex',
      mutate((r) => (r.keys[0].publicKeyHex = r.keys[0].publicKeyHex.slice(2))),
      'didKey.keys[0].publicKeyHex',
      /64 hex/,
    ],
    [
      'a key that does not match its did',
      mutate((r) => (r.did = other.did)),
      'didKey.keys[0].publicKeyHex',
      /does not match the key in did/,
    ],
    [
      'a kid that is not the public key',
      mutate((r) => (r.keys[0].kid = other.keys[0].kid)),
      'didKey.keys[0].kid',
      /publicKeyHex/,
    ],
    [
      'a controllerKeyId that is not the public key',
      mutate((r) => (r.controllerKeyId = 'abc')),
      'didKey.controllerKeyId',
      /publicKeyHex/,
    ],
    [
      'no privateKeyHex',
      mutate((r) => delete (r.keys[0] as Partial<(typeof r.keys)[0]>).privateKeyHex),
      'didKey.keys[0].privateKeyHex',
      /128 hex/,
    ],
    [
      'a seed-only privateKeyHex (64 hex)',
      mutate((r) => (r.keys[0].privateKeyHex = r.keys[0].privateKeyHex.slice(0, 64))),
      'didKey.keys[0].privateKeyHex',
      /128 hex/,
    ],
    [
      'a non-hex privateKeyHex',
      mutate((r) => (r.keys[0].privateKeyHex = 'zz' + r.keys[0].privateKeyHex.slice(2))),
      'didKey.keys[0].privateKeyHex',
      /128 hex/,
    ],
    [
      'a wrong public half in privateKeyHex',
      mutate((r) => (r.keys[0].privateKeyHex = r.keys[0].privateKeyHex.slice(0, 64) + other.keys[0].publicKeyHex)),
      'didKey.keys[0].privateKeyHex',
      /public half/,
    ],
    [
      'a seed of another key',
      mutate((r) => (r.keys[0].privateKeyHex = other.keys[0].privateKeyHex.slice(0, 64) + r.keys[0].publicKeyHex)),
      'didKey.keys[0].privateKeyHex',
      /seed does not produce/,
    ],
  ];

  it.each(cases)('refuses %s', (_name, input, field, rule) => {
    const error = expectValidationError(() => parseDidKeyRecord(input), field, rule);
    // Never any part of the secret in what may be logged or returned over HTTP.
    const secretSeed = record.keys[0].privateKeyHex.slice(0, 64);
    expect(JSON.stringify(error.toJSON()).toLowerCase()).not.toContain(secretSeed);
    expect(error.message.toLowerCase()).not.toContain(other.keys[0].privateKeyHex.slice(0, 64));
  });

  it('checks that the SDK happily encrypts with a record whose key does not match its did', async () => {
    const recipient = await sdk.createKey();
    const spliced = { ...clone(record), did: other.did };
    const jwe = await sdk.encryptPII({
      senderDIDKey: spliced.did,
      recipientDIDkeys: [recipient.did],
      body: 'x',
      keypair: spliced,
    });
    await expect(sdk.decryptPII({ encryptedMessage: jwe, keypair: recipient })).rejects.toThrow(/unable to decrypt/);
  });
});

describe('public view', () => {
  const record = createDidKeyRecord(SEED);

  it('drops privateKeyHex and nothing else', () => {
    const pub = toPublicDidKeyRecord(record);
    const { privateKeyHex: _secret, ...publicEntry } = record.keys[0];
    expect(pub).toEqual({ ...record, keys: [publicEntry] });
    expect(JSON.stringify(pub)).not.toContain(record.keys[0].privateKeyHex.slice(0, 64));
  });

  it('parses public records and refuses one that carries a private key', () => {
    expect(parsePublicDidKeyRecord(toPublicDidKeyRecord(record))).toEqual(toPublicDidKeyRecord(record));
    expectValidationError(() => parsePublicDidKeyRecord(record), 'didKey.keys[0].privateKeyHex', /must not be present/);
    expectValidationError(
      () => parsePublicDidKeyRecord({ ...toPublicDidKeyRecord(record), did: createDidKeyRecord().did }),
      'didKey.keys[0].publicKeyHex',
      /does not match/,
    );
  });
});

function base58btcRaw(bytes: number[]): string {
  return base58btc.encode(Uint8Array.from(bytes)).slice(1);
}
