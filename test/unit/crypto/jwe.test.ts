/**
 * Our JWE against did-jwt 9 as the reference implementation (the same library family the network's SDK uses, in
 * version 7): identical structure, cross-decryption both ways, identical key derivation, and every tampering refused.
 */
import { randomBytes } from 'node:crypto';
import {
  concatKDF,
  createJWE,
  decryptJWE,
  xc20pAuthDecrypterEcdh1PuV3x25519WithXc20PkwV2,
  xc20pAuthEncrypterEcdh1PuV3x25519WithXc20PkwV2,
  type JWE,
} from 'did-jwt';
import { base58btc } from 'multiformats/bases/base58';
import { CryptoError, ValidationError } from '../../../lib/errors';
import {
  createDidKeyRecord,
  decryptJwe,
  decryptPiiValue,
  encryptJwe,
  encryptPiiValue,
  jweKidFromDid,
  Keyring,
  localDidKey,
  piiRecipients,
  remoteDidKey,
  x25519PublicKeyFromDid,
  x25519SecretFromSeed,
  type DidKeyRecord,
  type GeneralJwe,
} from '../../../lib/crypto';
import { ecdh1puKek } from '../../../lib/crypto/ecdh-1pu';

const sender = createDidKeyRecord();
const escrow = createDidKeyRecord();
const counterparty = createDidKeyRecord();
const stranger = createDidKeyRecord();
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
const seedOf = (r: DidKeyRecord) => new Uint8Array(Buffer.from(r.keys[0].privateKeyHex.slice(0, 64), 'hex'));
const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const decodeProtected = (jwe: { protected: string }) => JSON.parse(Buffer.from(jwe.protected, 'base64url').toString());

function ours(plaintext: string, recipients: DidKeyRecord[] = [sender, escrow, counterparty]): GeneralJwe {
  return encryptJwe(
    utf8(plaintext),
    localDidKey(sender),
    recipients.map((r) => remoteDidKey(r.did)),
  );
}

/** The SDK's exact did-jwt call sequence (Ecdh1PuXC20P.encrypt), on did-jwt 9. */
async function theirs(plaintext: string, recipients: DidKeyRecord[] = [sender, escrow, counterparty]): Promise<JWE> {
  const encrypters = recipients.map((r) =>
    xc20pAuthEncrypterEcdh1PuV3x25519WithXc20PkwV2(
      x25519PublicKeyFromDid(r.did),
      x25519SecretFromSeed(seedOf(sender)),
      {
        kid: jweKidFromDid(r.did),
      },
    ),
  );
  // did-jwt mutates the header object it is given: always a fresh one.
  return createJWE(utf8(plaintext), encrypters, {
    skid: jweKidFromDid(sender.did),
    typ: 'application/didcomm-encrypted+json',
  });
}

async function decryptWithDidJwt(jwe: unknown, recipient: DidKeyRecord): Promise<string> {
  const decrypter = xc20pAuthDecrypterEcdh1PuV3x25519WithXc20PkwV2(
    x25519SecretFromSeed(seedOf(recipient)),
    x25519PublicKeyFromDid(sender.did),
  );
  // decryptJWE mutates its input (it merges the protected header into each recipient header).
  return text(await decryptJWE(structuredClone(jwe) as JWE, decrypter));
}

function expectCryptoError(fn: () => unknown, message: RegExp): CryptoError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(CryptoError);
  expect((caught as Error).message).toMatch(message);
  return caught as CryptoError;
}

describe('structure is the one did-jwt (and so the network SDK) produces', () => {
  it('has the same keys in the same order, the same protected header and the same field sizes', async () => {
    const a = ours('Frodo Baggins');
    const b = await theirs('Frodo Baggins');
    const shape = (jwe: object) =>
      JSON.parse(JSON.stringify(jwe), (key, value) =>
        typeof value === 'string' &&
        key !== 'protected' &&
        key !== 'kid' &&
        key !== 'alg' &&
        key !== 'kty' &&
        key !== 'crv'
          ? value.length
          : value,
      );
    expect(shape(a)).toEqual(shape(b));
    expect(Object.keys(a)).toEqual(['protected', 'iv', 'ciphertext', 'tag', 'recipients']);
    expect(a.protected).toBe(b.protected);
    expect(decodeProtected(a)).toEqual({
      skid: jweKidFromDid(sender.did),
      typ: 'application/didcomm-encrypted+json',
      enc: 'XC20P',
    });
    expect(Buffer.from(a.protected, 'base64url').toString()).toBe(
      `{"skid":"${jweKidFromDid(sender.did)}","typ":"application/didcomm-encrypted+json","enc":"XC20P"}`,
    );
    expect(a.recipients.map((r) => r.header.kid)).toEqual(
      [sender, escrow, counterparty].map((r) => jweKidFromDid(r.did)),
    );
    expect(Object.keys(a.recipients[0]!)).toEqual(['encrypted_key', 'header']);
    expect(Object.keys(a.recipients[0]!.header)).toEqual(['iv', 'tag', 'kid', 'alg', 'epk']);
    expect(a.recipients[0]!.header.epk).toEqual({ kty: 'OKP', crv: 'X25519', x: expect.stringMatching(/^[\w-]{43}$/) });
  });

  it('uses a fresh ephemeral key per recipient and fresh content key and nonces per message', () => {
    const a = ours('same');
    const b = ours('same');
    const epks = [...a.recipients, ...b.recipients].map((r) => r.header.epk.x);
    expect(new Set(epks).size).toBe(6);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.iv).not.toBe(b.iv);
    expect(new Set([...a.recipients, ...b.recipients].map((r) => r.header.iv)).size).toBe(6);
  });

  it('derives the key-encryption key exactly as did-jwt concatKDF does', () => {
    for (let i = 0; i < 5; i++) {
      const zE = randomBytes(32);
      const zS = randomBytes(32);
      const expected = concatKDF(Buffer.concat([zE, zS]), 256, 'ECDH-1PU+XC20PKW');
      expect(Buffer.from(ecdh1puKek(zE, zS)).equals(Buffer.from(expected))).toBe(true);
    }
  });
});

describe('cross-decryption with did-jwt', () => {
  it('did-jwt decrypts what we encrypt, for every recipient', async () => {
    const jwe = ours('Frodo Baggins, Bag End');
    for (const recipient of [sender, escrow, counterparty]) {
      expect(await decryptWithDidJwt(jwe, recipient)).toBe('Frodo Baggins, Bag End');
    }
  });

  it('we decrypt what did-jwt encrypts, for every recipient', async () => {
    const jwe = await theirs('Сэмуайз Гэмджи 株式会社');
    for (const recipient of [sender, escrow, counterparty]) {
      const result = decryptJwe(JSON.stringify(jwe), Keyring.from([recipient]));
      expect(text(result.plaintext)).toBe('Сэмуайз Гэмджи 株式会社');
      expect(result.senderDid).toBe(sender.did);
      expect(result.recipientDid).toBe(recipient.did);
    }
  });

  it('accepts the JWE as a string or as a parsed object', () => {
    const jwe = ours('x');
    const keyring = Keyring.from([counterparty]);
    expect(text(decryptJwe(jwe, keyring).plaintext)).toBe('x');
    expect(text(decryptJwe(JSON.stringify(jwe), keyring).plaintext)).toBe('x');
  });
});

describe('keyring and recipient selection', () => {
  it('decrypts with a retired key still in the keyring', () => {
    const retired = createDidKeyRecord();
    const current = createDidKeyRecord();
    const old = encryptJwe(utf8('old data'), localDidKey(sender), [
      remoteDidKey(sender.did),
      remoteDidKey(retired.did),
    ]);
    const result = decryptJwe(old, Keyring.from([current, retired]));
    expect(text(result.plaintext)).toBe('old data');
    expect(result.recipientDid).toBe(retired.did);
  });

  it('refuses a keyring that holds none of the recipients, naming the recipient kids', () => {
    const error = expectCryptoError(
      () => decryptJwe(ours('x'), Keyring.from([stranger])),
      /none of our keys is a recipient/,
    );
    expect(error.details.recipients).toEqual([sender, escrow, counterparty].map((r) => jweKidFromDid(r.did)));
  });

  it('chooses the entry by kid: relabel our entry and it is not tried, even though its key would work', () => {
    const jwe = ours('x');
    jwe.recipients[2]!.header.kid = jweKidFromDid(stranger.did);
    expectCryptoError(() => decryptJwe(jwe, Keyring.from([counterparty])), /none of our keys is a recipient/);
  });

  it('is not disturbed by a damaged entry addressed to someone else', () => {
    const jwe = ours('x');
    jwe.recipients[0]!.encrypted_key = 'garbage';
    jwe.recipients[1]!.header.epk = { kty: 'OKP', crv: 'P-256', x: '' } as never;
    expect(text(decryptJwe(jwe, Keyring.from([counterparty])).plaintext)).toBe('x');
  });

  it('refuses an empty keyring and invalid records in it', () => {
    expect(() => Keyring.from([])).toThrow(ValidationError);
    const bad = { ...structuredClone(counterparty), did: stranger.did };
    expect(() => Keyring.from([sender, bad])).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ field: 'keyring[1].keys[0].publicKeyHex' }) }),
    );
  });

  it('never serialises private keys', () => {
    expect(JSON.stringify(Keyring.from([counterparty]))).not.toContain(counterparty.keys[0].privateKeyHex.slice(0, 64));
    expect(JSON.stringify(localDidKey(counterparty))).toBe(
      JSON.stringify({ did: counterparty.did, kid: jweKidFromDid(counterparty.did) }),
    );
  });
});

describe('tampering is refused with a CryptoError', () => {
  const keyring = Keyring.from([counterparty]);
  const flip = (b64: string, at = 0) => {
    const bytes = Buffer.from(b64, 'base64url');
    bytes[at] = bytes[at]! ^ 0x01;
    return bytes.toString('base64url');
  };
  const ourEntry = (jwe: GeneralJwe) => jwe.recipients[2]!;
  const cases: Array<[string, (jwe: GeneralJwe) => void, RegExp]> = [
    ['a flipped ciphertext bit', (j) => (j.ciphertext = flip(j.ciphertext, 5)), /content fails authentication/],
    ['a flipped tag bit', (j) => (j.tag = flip(j.tag)), /content fails authentication/],
    ['a flipped iv bit', (j) => (j.iv = flip(j.iv)), /content fails authentication/],
    [
      'a re-ordered protected header (same fields, different bytes)',
      (j) => {
        const { skid, typ, enc } = decodeProtected(j);
        j.protected = b64json({ typ, skid, enc });
      },
      /content fails authentication/,
    ],
    [
      'a protected header naming another Ed25519 sender',
      (j) => (j.protected = b64json({ ...decodeProtected(j), skid: jweKidFromDid(escrow.did) })),
      /content key does not unwrap/,
    ],
    [
      'a flipped encrypted_key bit',
      (j) => (ourEntry(j).encrypted_key = flip(ourEntry(j).encrypted_key)),
      /does not unwrap/,
    ],
    ['a flipped wrap tag bit', (j) => (ourEntry(j).header.tag = flip(ourEntry(j).header.tag)), /does not unwrap/],
    ['a flipped wrap iv bit', (j) => (ourEntry(j).header.iv = flip(ourEntry(j).header.iv)), /does not unwrap/],
    ['a swapped ephemeral key', (j) => (ourEntry(j).header.epk.x = j.recipients[0]!.header.epk.x), /does not unwrap/],
    [
      'a low-order ephemeral key',
      (j) => (ourEntry(j).header.epk.x = Buffer.alloc(32).toString('base64url')),
      /not a usable X25519 key/,
    ],
    [
      'another key agreement alg',
      (j) => ((ourEntry(j).header as { alg: string }).alg = 'ECDH-ES+XC20PKW'),
      /recipient alg/,
    ],
    ['a truncated tag', (j) => (j.tag = j.tag.slice(0, 20)), /tag must be 16 bytes/],
    // The last of 22 characters carries 2 bits of padding; a lenient decoder would read the same 16 bytes.
    [
      'a non-canonical base64url tag',
      (j) => (j.tag = j.tag.slice(0, 21) + B64URL[B64URL.indexOf(j.tag[21]!) ^ 1]),
      /tag must be 16 bytes/,
    ],
    ['an added aad', (j) => Object.assign(j, { aad: 'AAAA' }), /aad and unprotected/],
    ['no recipients', (j) => (j.recipients = []), /no recipients/],
    [
      'a recipient without kid',
      (j) => delete (j.recipients[0]!.header as Partial<GeneralJwe['recipients'][0]['header']>).kid,
      /no header.kid/,
    ],
    ['another enc', (j) => (j.protected = b64json({ ...decodeProtected(j), enc: 'A256GCM' })), /enc must be XC20P/],
    [
      'an added alg in the protected header',
      (j) => (j.protected = b64json({ ...decodeProtected(j), alg: 'dir' })),
      /unsupported protected header fields: alg/,
    ],
    [
      'a non-Ed25519 (X25519) sender did:key',
      (j) => {
        const x = x25519PublicKeyFromDid(sender.did);
        const xDid = `did:key:${base58btc.encode(Uint8Array.from([0xec, 0x01, ...x]))}`;
        j.protected = b64json({ ...decodeProtected(j), skid: `${xDid}#${xDid.slice(8)}` });
      },
      /sender \(skid\) is not an Ed25519 did:key/,
    ],
    [
      'a skid fragment that is not the X25519 key of its did',
      (j) =>
        (j.protected = b64json({
          ...decodeProtected(j),
          skid: `${sender.did}#${jweKidFromDid(escrow.did).split('#')[1]}`,
        })),
      /skid fragment/,
    ],
  ];

  it.each(cases)('%s', (_name, tamper, message) => {
    const jwe = ours('Frodo Baggins');
    expect(text(decryptJwe(structuredClone(jwe), keyring).plaintext)).toBe('Frodo Baggins');
    tamper(jwe);
    const error = expectCryptoError(() => decryptJwe(jwe, keyring), message);
    expect(JSON.stringify(error.toJSON())).not.toContain('Frodo');
  });

  it('refuses input that is not a JWE at all', () => {
    expectCryptoError(() => decryptJwe('{not json', keyring), /not JSON/);
    expectCryptoError(() => decryptJwe('[]', keyring), /not a JSON object/);
    expectCryptoError(() => decryptJwe(42, keyring), /not a JSON object/);
  });
});

describe('the personal-data message inside the JWE', () => {
  const keyring = Keyring.from([counterparty]);

  it('has the SDK message shape and decrypts to its body and proven sender', () => {
    const before = Date.now();
    const jwe = encryptPiiValue('Frodo', localDidKey(sender), piiRecipients(localDidKey(sender), [counterparty.did]));
    const { plaintext } = decryptJwe(jwe, keyring);
    const message = JSON.parse(text(plaintext));
    expect(Object.keys(message)).toEqual(['type', 'from', 'id', 'body']);
    expect(message).toEqual({
      type: 'notabene.escrow.pii.message',
      from: sender.did,
      id: expect.stringMatching(/^notabene\.escriw\.pii-\d+$/),
      body: 'Frodo',
    });
    expect(Number(message.id.split('-').pop())).toBeGreaterThanOrEqual(before);
    expect(decryptPiiValue(jwe, keyring)).toEqual({ body: 'Frodo', from: sender.did });
  });

  it('orders recipients sender first, then the others in the given order, once each', () => {
    const key = localDidKey(sender);
    expect(piiRecipients(key, [escrow.did, counterparty.did, sender.did, escrow.did]).map((r) => r.did)).toEqual([
      sender.did,
      escrow.did,
      counterparty.did,
    ]);
  });

  it('refuses a recipient that is not an Ed25519 did:key, naming it', () => {
    const x = x25519PublicKeyFromDid(counterparty.did);
    const xDid = `did:key:${base58btc.encode(Uint8Array.from([0xec, 0x01, ...x]))}`;
    expect(() => piiRecipients(localDidKey(sender), [escrow.did, xDid])).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ field: 'recipients[1]', rule: expect.stringMatching(/X25519/) }),
      }),
    );
  });

  it('refuses a message whose "from" is not the key that authenticated it', () => {
    // A holder of the stranger key claims to be `sender`.
    const forged = { type: 'notabene.escrow.pii.message', from: sender.did, id: 'notabene.escriw.pii-1', body: 'x' };
    const jwe = encryptJwe(utf8(JSON.stringify(forged)), localDidKey(stranger), [remoteDidKey(counterparty.did)]);
    expectCryptoError(() => decryptPiiValue(jwe, keyring), /"from" does not match the sender key/);
  });

  it.each([
    ['another message type', { type: 'other', from: stranger.did, id: 'i', body: 'x' }, /type is not/],
    [
      'a non-string body',
      { type: 'notabene.escrow.pii.message', from: stranger.did, id: 'i', body: { a: 1 } },
      /body is not a string/,
    ],
    ['a non-JSON plaintext', 'plain text', /not JSON/],
  ])('refuses %s', (_name, message, error) => {
    const bytes = utf8(typeof message === 'string' ? message : JSON.stringify(message));
    const jwe = encryptJwe(bytes, localDidKey(stranger), [remoteDidKey(counterparty.did)]);
    expectCryptoError(() => decryptPiiValue(jwe, keyring), error);
  });
});
