/**
 * Child process for x25519.test.ts: generates ephemeral X25519 keys and uses them as encryption does, while Node
 * collects garbage every few allocations (`--gc-interval`), the condition under which exporting a freshly generated
 * key deadlocks Node 20. Prints "ok" if it finishes.
 */
import { setFlagsFromString } from 'node:v8';
import { generateEphemeralX25519, x25519, x25519PublicKeyObject } from '../../../lib/crypto/x25519';

// Set after loading, so module loading is not slowed down by the constant collections.
setFlagsFromString('--gc-interval=41');
const peer = x25519PublicKeyObject(new Uint8Array(32).fill(7));
const rounds = Number(process.argv[2] ?? 20_000);
for (let i = 0; i < rounds; i++) x25519(generateEphemeralX25519().privateKey, peer);
process.stdout.write('ok\n');
