import { randomBytes } from 'node:crypto';
import { loadAuditConfig } from '../../../audit/config';
import {
  checkCheckpoint,
  checkTrailerSignature,
  exportTrailer,
  parseCheckpointKeys,
  signCheckpoint,
} from '../../../audit/checkpoint-signature';

const key = () => randomBytes(32).toString('base64');

describe('audit checkpoints: keys, signatures, settings', () => {
  it('parses AUDIT_CHECKPOINT_KEYS, the first key signing, and names the variable when it is wrong', () => {
    const ring = parseCheckpointKeys(`new:${key()}, old:${key()}`);
    expect(ring.currentKeyId).toBe('new');
    expect([...ring.keys.keys()]).toEqual(['new', 'old']);
    expect(() => parseCheckpointKeys(key())).toThrow(/^AUDIT_CHECKPOINT_KEYS: entry ".*" has no "id:" prefix/);
    expect(() => parseCheckpointKeys(`a:${randomBytes(16).toString('base64')}`)).toThrow(
      /^AUDIT_CHECKPOINT_KEYS: key "a" is 16 bytes, not 32/,
    );
    expect(() => parseCheckpointKeys('')).toThrow(/^AUDIT_CHECKPOINT_KEYS: holds no key/);
  });

  it('a checkpoint verifies with its key whatever the order of its heads, and not once any field changes', () => {
    const ring = parseCheckpointKeys(`k:${key()}`);
    const heads = [
      { chain: 'key', seq: 3, hash: 'b'.repeat(64) },
      { chain: 'incoming', seq: 7, hash: 'a'.repeat(64) },
    ];
    const c = signCheckpoint(ring, { seq: 4, at: '2026-11-25T10:00:00.000Z', heads });
    expect(c.heads.map((h) => h.chain)).toEqual(['incoming', 'key']);
    expect(checkCheckpoint(ring, { ...c, heads: [...c.heads].reverse() })).toBe('valid');
    expect(checkCheckpoint(ring, { ...c, seq: 5 })).toBe('invalid');
    expect(checkCheckpoint(ring, { ...c, at: '2026-11-25T10:00:00.001Z' })).toBe('invalid');
    expect(checkCheckpoint(ring, { ...c, heads: [{ ...c.heads[0]!, seq: 6 }, c.heads[1]!] })).toBe('invalid');
    expect(checkCheckpoint(parseCheckpointKeys(`k:${key()}`), c)).toBe('invalid');
    expect(checkCheckpoint(parseCheckpointKeys(`other:${key()}`), c)).toBe('unknown-key');
    // A checkpoint's signature is not a trailer's: the two are signed apart.
    expect(checkTrailerSignature(ring, { trailer: true, rows: 4, heads: c.heads, keyId: c.keyId, mac: c.mac })).toBe(
      'invalid',
    );
    const t = exportTrailer(4, heads, ring);
    expect(checkTrailerSignature(ring, t)).toBe('valid');
    expect(checkTrailerSignature(ring, exportTrailer(4, heads))).toBe('unsigned');
  });

  it('reads the interval and heartbeat, refusing what is not a duration', () => {
    expect(loadAuditConfig({})).toEqual({
      checkpointKeys: undefined,
      checkpointIntervalMs: 60_000,
      checkpointHeartbeatMs: 3_600_000,
    });
    expect(loadAuditConfig({ AUDIT_CHECKPOINT_INTERVAL: '30s', AUDIT_CHECKPOINT_HEARTBEAT: '15m' })).toMatchObject({
      checkpointIntervalMs: 30_000,
      checkpointHeartbeatMs: 900_000,
    });
    expect(() => loadAuditConfig({ AUDIT_CHECKPOINT_INTERVAL: 'often' })).toThrow(
      /^AUDIT_CHECKPOINT_INTERVAL: "often" is not a duration/,
    );
  });
});
