/**
 * The VASPs' own did:key pairs, in the orchestrator's schema (db/migrations/orchestrator/0002_keystore.sql).
 *
 * - Private keys are stored only sealed (lib/crypto/key-wrapper.ts): the Ed25519 seed under a per-row AES-256-GCM
 *   data key, the data key wrapped under the master key. Nothing in this module logs, returns or throws key material: callers get
 *   `KeyInfo` (ids, did:keys, public keys, states). The two exceptions are named for what they do: `loadKeyring` and
 *   `loadActiveKey` return prepared private keys for in-process encryption and decryption.
 * - Lifecycle per VASP: pending → active → retired → destroyed. At most one key is active (a partial unique index);
 *   state changes of one VASP are serialised by a transaction-scoped advisory lock and audited in audit_log.
 */
import { randomUUID, randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  createDidKeyRecord,
  Keyring,
  localDidKey,
  parseDidKeyRecord,
  type DidKeyRecord,
  type LocalDidKey,
} from '../lib/crypto';
import { ConflictError, CryptoError, NotFoundError, ValidationError } from '../lib/errors';
import { aesGcmOpen, aesGcmSeal, type KeyWrapper } from '../lib/crypto/key-wrapper';
import {
  assertVaspDid,
  type AuditContext,
  type ImportOutcome,
  type KeyInfo,
  type KeySource,
  type KeyState,
} from './types';
import { withTransaction } from '../db/transaction';
import { appendAuditEntry, recordAuditEntry, type AuditEntry } from '../audit/store';

interface KeyRow {
  id: string;
  vasp_did: string;
  did_key: string;
  public_key_hex: string;
  state: KeyState;
  source: KeySource;
  created_at: Date;
  activated_at: Date | null;
  retired_at: Date | null;
  destroyed_at: Date | null;
}

interface SealedRow extends KeyRow {
  wrapping_key_id: string;
  wrapped_data_key: Buffer;
  sealed_private_key: Buffer;
}

const PUBLIC_COLUMNS =
  'id, vasp_did, did_key, public_key_hex, state, source, created_at, activated_at, retired_at, destroyed_at';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toInfo(row: KeyRow): KeyInfo {
  return {
    id: row.id,
    vaspDid: row.vasp_did,
    did: row.did_key,
    publicKeyHex: row.public_key_hex,
    state: row.state,
    source: row.source,
    createdAt: row.created_at.toISOString(),
    activatedAt: iso(row.activated_at),
    retiredAt: iso(row.retired_at),
    destroyedAt: iso(row.destroyed_at),
  };
}

/** The associated data that binds both ciphertexts of a row to that row. */
const sealContext = (id: string, vaspDid: string, did: string) => `tro-keystore:v1|${id}|${vaspDid}|${did}`;
export class Keystore {
  constructor(
    readonly pool: Pool,
    private readonly wrapper: KeyWrapper,
  ) {}

  /** Keeps the pool and the wrapper out of logs. */
  toJSON(): { keystore: string } {
    return { keystore: this.wrapper.keyId };
  }

  /**
   * Creates a new key pair for the VASP in state `pending`. Idempotent per `requestId`: a retried call returns the key
   * the first call created, so a rotation never leaves two keys behind.
   */
  async createPendingKey(vaspDid: string, requestId: string, audit: AuditContext): Promise<KeyInfo> {
    assertVaspDid(vaspDid);
    const existing = await this.pool.query<KeyRow>(
      `select ${PUBLIC_COLUMNS} from vasp_keys where vasp_did = $1 and request_id = $2`,
      [vaspDid, requestId],
    );
    if (existing.rows[0]) return toInfo(existing.rows[0]);
    const seed = randomBytes(32);
    const record = createDidKeyRecord(seed);
    const id = randomUUID();
    const sealed = await this.seal(id, vaspDid, record.did, seed);
    return this.transaction(vaspDid, async (client) => {
      const inserted = await client.query<KeyRow>(
        `insert into vasp_keys (id, vasp_did, did_key, public_key_hex, state, source, request_id,
           wrapping_key_id, wrapped_data_key, sealed_private_key)
         values ($1, $2, $3, $4, 'pending', 'generated', $5, $6, $7, $8)
         on conflict (vasp_did, request_id) do nothing
         returning ${PUBLIC_COLUMNS}`,
        [id, vaspDid, record.did, record.keys[0].publicKeyHex, requestId, sealed.keyId, sealed.wrapped, sealed.sealed],
      );
      const row = inserted.rows[0];
      if (!row) {
        const again = await client.query<KeyRow>(
          `select ${PUBLIC_COLUMNS} from vasp_keys where vasp_did = $1 and request_id = $2`,
          [vaspDid, requestId],
        );
        return toInfo(again.rows[0]!);
      }
      await this.audit(client, audit, 'key.created', vaspDid, {
        keyId: id,
        did: record.did,
        state: 'pending',
        requestId,
      });
      return toInfo(row);
    });
  }

  /**
   * Imports an existing key (the agent's `KEYS`, or a record made by `keys create` / `/didkey/new`). A key already
   * stored for the same VASP is left as it is, so importing twice changes nothing. A new key becomes the active one
   * when the VASP has none (it is the key the agent used, hence the published one); otherwise it is kept as retired,
   * for decryption only: only a rotation, which publishes the key first, makes a key active.
   */
  async importKey(
    vaspDid: string,
    record: DidKeyRecord,
    audit: AuditContext,
    field = 'key',
  ): Promise<{ key: KeyInfo; outcome: ImportOutcome }> {
    assertVaspDid(vaspDid);
    const parsed = parseDidKeyRecord(record, field);
    const seed = Buffer.from(parsed.keys[0].privateKeyHex.slice(0, 64), 'hex');
    const id = randomUUID();
    const sealed = await this.seal(id, vaspDid, parsed.did, seed);
    return this.transaction(vaspDid, async (client) => {
      const known = await client.query<KeyRow>(`select ${PUBLIC_COLUMNS} from vasp_keys where did_key = $1`, [
        parsed.did,
      ]);
      const row = known.rows[0];
      if (row) {
        if (row.vasp_did !== vaspDid) {
          throw new ConflictError(`${field}: this key is already stored for another VASP`, {
            field,
            rule: 'a key belongs to one VASP',
          });
        }
        return { key: toInfo(row), outcome: 'already-present' as const };
      }
      const active = await client.query('select 1 from vasp_keys where vasp_did = $1 and state = $2', [
        vaspDid,
        'active',
      ]);
      const state: KeyState = active.rowCount ? 'retired' : 'active';
      const inserted = await client.query<KeyRow>(
        `insert into vasp_keys (id, vasp_did, did_key, public_key_hex, state, source, wrapping_key_id, wrapped_data_key,
           sealed_private_key, activated_at, retired_at)
         values ($1, $2, $3, $4, $5, 'imported', $6, $7, $8, case when $5 = 'active' then now() end,
           case when $5 = 'retired' then now() end)
         returning ${PUBLIC_COLUMNS}`,
        [id, vaspDid, parsed.did, parsed.keys[0].publicKeyHex, state, sealed.keyId, sealed.wrapped, sealed.sealed],
      );
      await this.audit(client, audit, 'key.imported', vaspDid, { keyId: id, did: parsed.did, state });
      return {
        key: toInfo(inserted.rows[0]!),
        outcome: state === 'active' ? ('imported-active' as const) : ('imported-retired' as const),
      };
    });
  }

  /**
   * Makes a pending key the VASP's active key and retires the previous active key, in one transaction. Calling it
   * again for the key that is already active returns the same result, so a retried activity is harmless.
   */
  async activateKey(
    vaspDid: string,
    keyId: string,
    audit: AuditContext,
  ): Promise<{ active: KeyInfo; retired: KeyInfo[] }> {
    assertVaspDid(vaspDid);
    return this.transaction(vaspDid, async (client) => {
      const target = await this.rowOf(client, vaspDid, keyId);
      if (target.state === 'active') return { active: toInfo(target), retired: [] };
      if (target.state !== 'pending') {
        throw new ConflictError(`key ${keyId} is ${target.state}; only a pending key can be activated`, {
          field: 'keyId',
        });
      }
      const retired = await client.query<KeyRow>(
        `update vasp_keys set state = 'retired', retired_at = now() where vasp_did = $1 and state = 'active'
         returning ${PUBLIC_COLUMNS}`,
        [vaspDid],
      );
      const activated = await client.query<KeyRow>(
        `update vasp_keys set state = 'active', activated_at = now() where id = $1 returning ${PUBLIC_COLUMNS}`,
        [keyId],
      );
      for (const r of retired.rows) {
        await this.audit(client, audit, 'key.retired', vaspDid, { keyId: r.id, did: r.did_key, replacedBy: keyId });
      }
      await this.audit(client, audit, 'key.activated', vaspDid, {
        keyId,
        did: target.did_key,
        previousKeyIds: retired.rows.map((r) => r.id),
      });
      return { active: toInfo(activated.rows[0]!), retired: retired.rows.map(toInfo) };
    });
  }

  /**
   * Destroys a key on an explicit request: the sealed key and its wrapped data key are wiped, so data encrypted to it
   * can no longer be read by anyone. The active key cannot be destroyed (rotate first).
   */
  async destroyKey(vaspDid: string, keyId: string, audit: AuditContext): Promise<KeyInfo> {
    assertVaspDid(vaspDid);
    return this.transaction(vaspDid, async (client) => {
      const target = await this.rowOf(client, vaspDid, keyId);
      if (target.state === 'destroyed') return toInfo(target);
      if (target.state === 'active') {
        throw new ConflictError(
          `key ${keyId} is the active key of ${vaspDid}; rotate to a new key before destroying it`,
          { field: 'keyId' },
        );
      }
      const { rows } = await client.query<KeyRow>(
        `update vasp_keys set state = 'destroyed', destroyed_at = now(), wrapping_key_id = null, wrapped_data_key = null,
           sealed_private_key = null
         where id = $1 returning ${PUBLIC_COLUMNS}`,
        [keyId],
      );
      await this.audit(client, audit, 'key.destroyed', vaspDid, {
        keyId,
        did: target.did_key,
        previousState: target.state,
      });
      return toInfo(rows[0]!);
    });
  }

  /**
   * Records an outcome that changes no key (a failed rotation, a refused request) in the audit log. With an
   * `idempotencyKey` (an activity's, across its retries), a retry finds the row its earlier attempt wrote.
   */
  async recordAudit(
    audit: AuditContext,
    action: string,
    vaspDid: string,
    details: Record<string, unknown>,
    idempotencyKey?: string,
  ): Promise<void> {
    await recordAuditEntry(this.pool, auditEntry(audit, action, vaspDid, details), { idempotencyKey });
  }

  /**
   * Every key of the VASP that can still decrypt (active, retired, and pending ones, which may already be published),
   * prepared for `decryptPiiValue`. `undefined` when the VASP has none: the agent then neither encrypts nor decrypts
   * for it.
   */
  async loadKeyring(vaspDid: string): Promise<Keyring | undefined> {
    assertVaspDid(vaspDid);
    const { rows } = await this.pool.query<SealedRow>(
      `select * from vasp_keys where vasp_did = $1 and state <> 'destroyed' order by created_at`,
      [vaspDid],
    );
    if (rows.length === 0) return undefined;
    const records: DidKeyRecord[] = [];
    for (const row of rows) records.push(await this.unseal(row));
    return Keyring.from(records);
  }

  /** The VASP's active key, prepared for encryption as the sender; `undefined` when it has none. */
  async loadActiveKey(vaspDid: string): Promise<LocalDidKey | undefined> {
    assertVaspDid(vaspDid);
    const { rows } = await this.pool.query<SealedRow>(
      `select * from vasp_keys where vasp_did = $1 and state = 'active'`,
      [vaspDid],
    );
    return rows[0] ? localDidKey(await this.unseal(rows[0]), 'keystore') : undefined;
  }

  private async seal(id: string, vaspDid: string, did: string, seed: Buffer) {
    const dataKey = randomBytes(32);
    try {
      const context = sealContext(id, vaspDid, did);
      return {
        keyId: this.wrapper.keyId,
        wrapped: Buffer.from(await this.wrapper.wrap(dataKey, context)),
        sealed: aesGcmSeal(dataKey, seed, `seed|${context}`),
      };
    } finally {
      dataKey.fill(0);
      seed.fill(0);
    }
  }

  private async unseal(row: SealedRow): Promise<DidKeyRecord> {
    const context = sealContext(row.id, row.vasp_did, row.did_key);
    const dataKey = Buffer.from(await this.wrapper.unwrap(row.wrapped_data_key, row.wrapping_key_id, context));
    let seed: Buffer | undefined;
    try {
      seed = aesGcmOpen(dataKey, row.sealed_private_key, `seed|${context}`, `sealed key ${row.id}`);
      const record = createDidKeyRecord(seed);
      if (record.did !== row.did_key) throw new CryptoError(`sealed key ${row.id} does not produce its did:key`);
      return record;
    } finally {
      dataKey.fill(0);
      seed?.fill(0);
    }
  }

  private async rowOf(client: PoolClient, vaspDid: string, keyId: string): Promise<KeyRow> {
    if (!/^[0-9a-f-]{36}$/i.test(keyId)) throw new ValidationError('keyId', 'must be a key id (a UUID)');
    const { rows } = await client.query<KeyRow>(`select ${PUBLIC_COLUMNS} from vasp_keys where id = $1 for update`, [
      keyId,
    ]);
    const row = rows[0];
    if (!row || row.vasp_did !== vaspDid)
      throw new NotFoundError(`VASP ${vaspDid} has no key ${keyId}`, { field: 'keyId' });
    return row;
  }

  /** Appends to the audit chain in the key change's own transaction. */
  private async audit(
    tx: PoolClient,
    audit: AuditContext,
    action: string,
    vaspDid: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    await appendAuditEntry(tx, auditEntry(audit, action, vaspDid, details));
  }

  /** One transaction holding the VASP's advisory lock, so its state changes never interleave. */
  private transaction<T>(vaspDid: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work, `tro.vasp_keys:${vaspDid}`);
  }
}

function auditEntry(
  audit: AuditContext,
  action: string,
  vaspDid: string,
  details: Record<string, unknown>,
): AuditEntry {
  return {
    actor: audit.actor,
    action,
    subject: vaspDid,
    details: {
      ...details,
      ...(audit.reason ? { reason: audit.reason } : {}),
      ...(audit.workflowId ? { workflowId: audit.workflowId } : {}),
      ...(audit.principal ? { principal: audit.principal } : {}),
    },
  };
}

/** The VASP's keys, newest first, without private parts. Needs no master key (the API lists keys with it). */
export async function listKeys(pool: Pool, vaspDid: string): Promise<KeyInfo[]> {
  assertVaspDid(vaspDid);
  const { rows } = await pool.query<KeyRow>(
    `select ${PUBLIC_COLUMNS} from vasp_keys where vasp_did = $1 order by created_at desc, id`,
    [vaspDid],
  );
  return rows.map(toInfo);
}
