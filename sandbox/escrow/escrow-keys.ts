/**
 * The personal-data service's escrow key per VASP.
 * The service generates it on first request and holds it: the seed is sealed under a key of the service's own
 * (service_secrets), bound to the VASP and the did:key, and no route ever returns it. Rotation adds a new active key and
 * keeps the previous one, retired, for data already encrypted to it.
 */
import { withTransaction } from '../../db/transaction';
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  createDidKeyRecord,
  Keyring,
  parseDidKey,
  toPublicDidKeyRecord,
  type PublicDidKeyRecord,
} from '../../lib/crypto';
import { aesGcmOpen, aesGcmSeal } from '../../lib/crypto/key-wrapper';
import { serviceSecret } from '../auth/store';
import { activeEscrowDid, insertActiveEscrowKey, retireActiveEscrowKey, sealedEscrowKeys } from './store';

const SECRET_NAME = 'escrow-sealing-key';

const context = (vaspDid: string, did: string) => `sandbox-escrow:v1|${vaspDid}|${did}`;

export class EscrowKeys {
  private constructor(
    private readonly pool: Pool,
    private readonly sealingKey: Uint8Array,
  ) {}

  static async open(pool: Pool): Promise<EscrowKeys> {
    return new EscrowKeys(pool, new Uint8Array(await serviceSecret(pool, SECRET_NAME, randomBytes(32))));
  }

  toJSON(): { escrowKeys: true } {
    return { escrowKeys: true };
  }

  /** The VASP's active escrow key (public part), created on first use. */
  async current(vaspDid: string): Promise<PublicDidKeyRecord> {
    const active = await activeEscrowDid(this.pool, vaspDid);
    if (active) return publicRecordOfDid(active);
    return this.withLock(vaspDid, async (client) => {
      const again = await activeEscrowDid(client, vaspDid);
      if (again) return publicRecordOfDid(again);
      return this.insertActive(client, vaspDid);
    });
  }

  /** Replaces the active escrow key with a new one; the old one is retired, not deleted. */
  async rotate(vaspDid: string): Promise<PublicDidKeyRecord> {
    return this.withLock(vaspDid, async (client) => {
      await retireActiveEscrowKey(client, vaspDid);
      return this.insertActive(client, vaspDid);
    });
  }

  /** Every escrow key of the VASP, for decryption by the service (hosted and hybrid modes, later parts). */
  async keyring(vaspDid: string): Promise<Keyring | undefined> {
    const rows = await sealedEscrowKeys(this.pool, vaspDid);
    if (rows.length === 0) return undefined;
    return Keyring.from(
      rows.map((row) => {
        const seed = aesGcmOpen(this.sealingKey, row.sealed_seed, context(vaspDid, row.did_key), 'escrow key');
        try {
          return createDidKeyRecord(seed);
        } finally {
          seed.fill(0);
        }
      }),
    );
  }

  private async insertActive(client: PoolClient, vaspDid: string): Promise<PublicDidKeyRecord> {
    const seed = randomBytes(32);
    const record = createDidKeyRecord(seed);
    const sealed = aesGcmSeal(this.sealingKey, seed, context(vaspDid, record.did));
    seed.fill(0);
    await insertActiveEscrowKey(client, vaspDid, record.did, sealed);
    return toPublicDidKeyRecord(record);
  }

  private withLock<T>(vaspDid: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work, `sandbox.escrow_keys:${vaspDid}`);
  }
}

/** The public JsonDIDKey of a did:key: a function of the did alone, so the sealed seed stays closed. */
function publicRecordOfDid(did: string): PublicDidKeyRecord {
  const { ed25519PublicKey } = parseDidKey(did);
  const publicKeyHex = Buffer.from(ed25519PublicKey).toString('hex');
  return {
    did,
    controllerKeyId: publicKeyHex,
    keys: [
      { type: 'Ed25519', kid: publicKeyHex, publicKeyHex, meta: { algorithms: ['Ed25519', 'EdDSA'] }, kms: 'local' },
    ],
    services: [],
    provider: 'did:key',
  };
}
