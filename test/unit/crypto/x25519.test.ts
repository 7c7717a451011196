import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { x25519 as nobleX25519 } from '@noble/curves/ed25519.js';
import {
  generateEphemeralX25519,
  x25519,
  x25519PrivateKeyObject,
  x25519PublicKeyObject,
} from '../../../lib/crypto/x25519';

describe('node:crypto X25519 helpers', () => {
  it('agree with @noble/curves on shared secrets and public keys', () => {
    const a = nobleX25519.utils.randomSecretKey();
    const b = nobleX25519.utils.randomSecretKey();
    const aPub = nobleX25519.getPublicKey(a);
    const bPub = nobleX25519.getPublicKey(b);
    const ours = x25519(x25519PrivateKeyObject(a, aPub), x25519PublicKeyObject(bPub));
    expect(ours.equals(Buffer.from(nobleX25519.getSharedSecret(b, aPub)))).toBe(true);
  });

  it('make ephemeral keys whose published x is their public key', () => {
    const peer = nobleX25519.utils.randomSecretKey();
    const ephemeral = generateEphemeralX25519();
    expect(ephemeral.x).toMatch(/^[\w-]{43}$/);
    const fromEphemeral = x25519(ephemeral.privateKey, x25519PublicKeyObject(nobleX25519.getPublicKey(peer)));
    const fromPeer = nobleX25519.getSharedSecret(peer, Buffer.from(ephemeral.x, 'base64url'));
    expect(fromEphemeral.equals(Buffer.from(fromPeer))).toBe(true);
  });

  it('refuse a small-order public key (all-zero shared secret)', () => {
    const ephemeral = generateEphemeralX25519();
    expect(() => x25519(ephemeral.privateKey, x25519PublicKeyObject(new Uint8Array(32)))).toThrow();
  });

  // Exporting a freshly generated key as JWK deadlocks Node 20 when a GC runs mid-export (see x25519.ts). Against
  // the old code this check failed in about half of the runs: it can miss a regression, but never fails wrongly.
  it('never deadlocks under constant garbage collection', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'x25519-gc-stress.ts'), '20000'], {
      cwd: join(__dirname, '../../..'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.signal).toBeNull();
    expect(result.stdout).toBe('ok\n');
  }, 40_000);
});
