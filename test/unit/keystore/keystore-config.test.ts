import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../../lib/crypto';
import { loadConfig } from '../../../config';
import { ConfigError, ValidationError } from '../../../lib/errors';
import { LocalKeyWrapper, loadMasterKey, parseAgentKeys, parseMasterKey, recordFromPrivateKeyHex } from '../../../keys';

const seed = (n: number) => Buffer.alloc(32, n);
const record = createDidKeyRecord(seed(7));
const privateKeyHex = record.keys[0].privateKeyHex;
const vasp = 'did:ethr:0x1111111111111111111111111111111111111111';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('KEYSTORE_MASTER_KEY', () => {
  it('accepts base64 of 32 bytes and refuses anything else without quoting it', () => {
    const key = Buffer.alloc(32, 9);
    expect(parseMasterKey(key.toString('base64'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64url'))).toEqual(key);
    for (const bad of [Buffer.alloc(16).toString('base64'), 'not base64 at all!', `${key.toString('base64')}AAAA`]) {
      const e = configError(() => parseMasterKey(bad));
      expect(e.setting).toBe('KEYSTORE_MASTER_KEY');
      expect(e.message).not.toContain(bad);
    }
  });

  it('creates one development key file (mode 0600) and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keystore-'));
    try {
      const first = loadMasterKey(undefined, dir);
      expect(first).toHaveLength(32);
      expect(statSync(join(dir, 'keystore-master-key')).mode & 0o777).toBe(0o600);
      expect(loadMasterKey(undefined, dir)).toEqual(first);
      expect(readFileSync(join(dir, 'keystore-master-key'), 'utf8').trim()).toBe(first.toString('base64'));
      // The environment wins over the file.
      expect(loadMasterKey(Buffer.alloc(32, 1).toString('base64'), dir)).toEqual(Buffer.alloc(32, 1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('wraps under the context and refuses another context, another master key or altered bytes', async () => {
    const wrapper = new LocalKeyWrapper(Buffer.alloc(32, 3));
    const dataKey = Buffer.alloc(32, 4);
    const wrapped = await wrapper.wrap(dataKey, 'row-1');
    expect(Buffer.from(wrapped).includes(dataKey)).toBe(false);
    expect(Buffer.from(await wrapper.unwrap(wrapped, wrapper.keyId, 'row-1'))).toEqual(dataKey);
    await expect(wrapper.unwrap(wrapped, wrapper.keyId, 'row-2')).rejects.toThrow(/failed authentication/);
    const tampered = Buffer.from(wrapped);
    tampered[20]! ^= 1;
    await expect(wrapper.unwrap(tampered, wrapper.keyId, 'row-1')).rejects.toThrow(/failed authentication/);
    const other = new LocalKeyWrapper(Buffer.alloc(32, 5));
    await expect(other.unwrap(wrapped, wrapper.keyId, 'row-1')).rejects.toThrow(/wrapped under master key local:/);
    expect(JSON.stringify(wrapper)).not.toContain(Buffer.alloc(32, 3).toString('hex'));
  });
});

describe('KEY_ROTATION_PERIOD', () => {
  it('defaults to 90 days, takes s/m/h/d or off, and refuses nonsense', () => {
    expect(loadConfig({}).keyRotationPeriodMs).toBe(90 * 86_400_000);
    expect(loadConfig({ KEY_ROTATION_PERIOD: '12h' }).keyRotationPeriodMs).toBe(12 * 3_600_000);
    expect(loadConfig({ KEY_ROTATION_PERIOD: 'off' }).keyRotationPeriodMs).toBe(0);
    expect(configError(() => loadConfig({ KEY_ROTATION_PERIOD: '10s' })).setting).toBe('KEY_ROTATION_PERIOD');
    expect(configError(() => loadConfig({ KEY_ROTATION_PERIOD: 'weekly' })).setting).toBe('KEY_ROTATION_PERIOD');
  });
});

describe('KEYS (the agent key configuration)', () => {
  it('parses {vaspDID, privateKeyHex} entries into validated key records', () => {
    const keys = parseAgentKeys(JSON.stringify([{ vaspDID: vasp, privateKeyHex }]));
    expect(keys).toEqual([{ vaspDid: vasp, record }]);
  });

  it.each([
    ['not JSON', `[{"vaspDID": "${vasp}", "privateKeyHex": "${privateKeyHex}"`, /KEYS: is not valid JSON/],
    ['not an array', JSON.stringify({ vaspDID: vasp, privateKeyHex }), /is not a JSON array/],
    ['a bad DID', JSON.stringify([{ vaspDID: 'vasp-1', privateKeyHex }]), /KEYS\[0\]\.vaspDID: must be a VASP DID/],
    [
      'a short key',
      JSON.stringify([{ vaspDID: vasp, privateKeyHex: privateKeyHex.slice(0, 64) }]),
      /KEYS\[0\]\.privateKeyHex: must be 128 hex/,
    ],
    [
      'non-hex',
      JSON.stringify([{ vaspDID: vasp, privateKeyHex: `${privateKeyHex.slice(0, 126)}zz` }]),
      /KEYS\[0\]\.privateKeyHex: must be 128 hex/,
    ],
    [
      'a wrong public half',
      JSON.stringify([
        { vaspDID: vasp, privateKeyHex: privateKeyHex.slice(0, 64) + createDidKeyRecord(seed(8)).keys[0].publicKeyHex },
      ]),
      /KEYS\[0\]\.privateKeyHex: its public half does not match/,
    ],
    [
      'one key for two VASPs',
      JSON.stringify([
        { vaspDID: vasp, privateKeyHex },
        { vaspDID: 'did:ethr:0x2', privateKeyHex },
      ]),
      /KEYS\[1\]\.privateKeyHex: is the same key as KEYS\[0\]/,
    ],
  ])('refuses %s with a ConfigError naming the entry, never echoing the key', (_name, raw, message) => {
    const e = configError(() => parseAgentKeys(raw));
    expect(e.setting).toBe('KEYS');
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain(privateKeyHex.slice(0, 64));
    expect(e.message).not.toContain(privateKeyHex.slice(64));
  });
});

describe('recordFromPrivateKeyHex', () => {
  it('checks the did against the key', () => {
    expect(recordFromPrivateKeyHex(privateKeyHex, record.did, 'body')).toEqual(record);
    const other = createDidKeyRecord(seed(9)).did;
    expect(() => recordFromPrivateKeyHex(privateKeyHex, other, 'body')).toThrow(
      new ValidationError('body.did', 'does not match the key in privateKeyHex'),
    );
    expect(() => recordFromPrivateKeyHex(privateKeyHex, 'did:key:zNope', 'body')).toThrow(
      /body\.did: must be a did:key/,
    );
  });
});
