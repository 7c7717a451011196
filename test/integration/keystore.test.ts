import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { createDidKeyRecord, encryptPiiValue, decryptPiiValue, localDidKey, piiRecipients } from '../../lib/crypto';
import { ConflictError, NotFoundError } from '../../lib/errors';
import { importAgentKeys, Keystore, listKeys, LocalKeyWrapper, openKeystore, parseAgentKeys } from '../../keys';
import { randomDid, testEnv } from '../harness/platform';

/** Every byte the table holds for a VASP, as text and as raw bytea, to search for key material. */
async function tableBytes(pool: Pool, vaspDid: string): Promise<Buffer> {
  const { rows } = await pool.query<{ t: string; w: Buffer | null; s: Buffer | null }>(
    'select t::text as t, t.wrapped_data_key as w, t.sealed_private_key as s from vasp_keys t where vasp_did = $1',
    [vaspDid],
  );
  return Buffer.concat(rows.flatMap((r) => [Buffer.from(r.t), r.w ?? Buffer.alloc(0), r.s ?? Buffer.alloc(0)]));
}

/**
 * The heap file of vasp_keys after a checkpoint, or undefined when the role may not read server files (a managed
 * database): then the column check above is the evidence.
 */
async function onDiskBytes(pool: Pool): Promise<Buffer | undefined> {
  try {
    await pool.query('checkpoint');
    const { rows } = await pool.query<{ f: Buffer }>(
      `select pg_read_binary_file(pg_relation_filepath('vasp_keys')) as f`,
    );
    return rows[0]!.f;
  } catch (e) {
    if ((e as { code?: string }).code === '42501') return undefined;
    throw e;
  }
}

function containsSecret(haystack: Buffer, seed: Buffer): boolean {
  const hex = seed.toString('hex');
  return [
    seed,
    Buffer.from(hex),
    Buffer.from(hex.toUpperCase()),
    Buffer.from(seed.toString('base64')),
    Buffer.from(`\\x${hex}`),
  ].some((needle) => haystack.includes(needle));
}

describe('keystore on Postgres', () => {
  let pool: Pool;
  let keystore: Keystore;
  const master = randomBytes(32);
  beforeAll(() => {
    pool = createPool(testEnv().databaseUrl, 'orchestrator');
    keystore = new Keystore(pool, new LocalKeyWrapper(master));
  });
  afterAll(async () => pool?.end());

  it('stores imported keys only sealed, and decrypts data written to a retired key after a rotation', async () => {
    const vasp = randomDid();
    const seed = randomBytes(32);
    const original = createDidKeyRecord(Buffer.from(seed));
    const { key: first, outcome } = await keystore.importKey(vasp, original, { actor: 'test' });
    expect(outcome).toBe('imported-active');
    expect(first).toMatchObject({ vaspDid: vasp, did: original.did, state: 'active', source: 'imported' });

    // Someone encrypts to the VASP's current (soon old) key.
    const sender = localDidKey(createDidKeyRecord(randomBytes(32)));
    const jwe = encryptPiiValue('Alice', sender, piiRecipients(sender, [original.did]));

    const pending = await keystore.createPendingKey(vasp, 'rotation-1', { actor: 'test', reason: 'scheduled' });
    expect(pending.state).toBe('pending');
    // Retrying the same request finds the same key.
    expect((await keystore.createPendingKey(vasp, 'rotation-1', { actor: 'test' })).id).toBe(pending.id);
    const { active, retired } = await keystore.activateKey(vasp, pending.id, { actor: 'test', reason: 'scheduled' });
    expect(active).toMatchObject({ id: pending.id, state: 'active' });
    expect(retired.map((k) => k.id)).toEqual([first.id]);
    // Activating again is harmless.
    expect((await keystore.activateKey(vasp, pending.id, { actor: 'test' })).retired).toEqual([]);

    const keyring = (await keystore.loadKeyring(vasp))!;
    expect(keyring.dids.sort()).toEqual([original.did, pending.did].sort());
    expect(decryptPiiValue(jwe, keyring).body).toBe('Alice');
    expect((await keystore.loadActiveKey(vasp))!.did).toBe(pending.did);

    const bytes = await tableBytes(pool, vasp);
    expect(bytes.length).toBeGreaterThan(0);
    expect(containsSecret(bytes, seed)).toBe(false);
    // The table's file on disk too (old row versions included), where the database role may read it.
    const file = await onDiskBytes(pool);
    if (file) {
      expect(file.includes(Buffer.from(pending.did))).toBe(true);
      expect(containsSecret(file, seed)).toBe(false);
    }

    const states = (await listKeys(pool, vasp)).map((k) => [k.did, k.state]);
    expect(states).toEqual(
      expect.arrayContaining([
        [original.did, 'retired'],
        [pending.did, 'active'],
      ]),
    );
    const audit = await pool.query<{ action: string; details: { reason?: string } }>(
      'select action, details from audit_log where subject = $1 order by id',
      [vasp],
    );
    expect(audit.rows.map((r) => r.action)).toEqual(['key.imported', 'key.created', 'key.retired', 'key.activated']);
    expect(audit.rows[3]!.details.reason).toBe('scheduled');
  });

  it('keeps at most one active key per VASP in the schema itself', async () => {
    const vasp = randomDid();
    const { key } = await keystore.importKey(vasp, createDidKeyRecord(randomBytes(32)), { actor: 'test' });
    const copy = await pool.query('select * from vasp_keys where id = $1', [key.id]);
    const row = copy.rows[0];
    await expect(
      pool.query(
        `insert into vasp_keys (id, vasp_did, did_key, public_key_hex, state, source, wrapping_key_id, wrapped_data_key, sealed_private_key)
         values (gen_random_uuid(), $1, 'did:key:zOther', $2, 'active', 'imported', $3, $4, $5)`,
        [vasp, row.public_key_hex, row.wrapping_key_id, row.wrapped_data_key, row.sealed_private_key],
      ),
    ).rejects.toThrow(/vasp_keys_one_active_per_vasp/);
    // A destroyed key must not keep material, and a live key must have it.
    await expect(
      pool.query(`update vasp_keys set state = 'destroyed', destroyed_at = now() where id = $1`, [key.id]),
    ).rejects.toThrow(/vasp_keys_material_matches_state/);
  });

  it('refuses a row whose sealed key was moved to another row, and another master key', async () => {
    const vasp = randomDid();
    const a = await keystore.createPendingKey(vasp, 'a', { actor: 'test' });
    const b = await keystore.createPendingKey(vasp, 'b', { actor: 'test' });
    await pool.query(
      `update vasp_keys set sealed_private_key = (select sealed_private_key from vasp_keys where id = $1),
         wrapped_data_key = (select wrapped_data_key from vasp_keys where id = $1) where id = $2`,
      [a.id, b.id],
    );
    await expect(keystore.loadKeyring(vasp)).rejects.toThrow(/failed authentication/);
    const other = new Keystore(pool, new LocalKeyWrapper(randomBytes(32)));
    const vasp2 = randomDid();
    await keystore.createPendingKey(vasp2, 'x', { actor: 'test' });
    await expect(other.loadKeyring(vasp2)).rejects.toThrow(
      /KEYSTORE_MASTER_KEY: a stored key is wrapped under master key local:/,
    );
  });

  it('destroys only on request, wiping the material; never the active key', async () => {
    const vasp = randomDid();
    const { key: old } = await keystore.importKey(vasp, createDidKeyRecord(randomBytes(32)), { actor: 'test' });
    await expect(keystore.destroyKey(vasp, old.id, { actor: 'test' })).rejects.toBeInstanceOf(ConflictError);
    const next = await keystore.createPendingKey(vasp, 'r', { actor: 'test' });
    await keystore.activateKey(vasp, next.id, { actor: 'test' });
    const destroyed = await keystore.destroyKey(vasp, old.id, { actor: 'ops', reason: 'no data left encrypted to it' });
    expect(destroyed).toMatchObject({ state: 'destroyed' });
    const { rows } = await pool.query(
      'select wrapped_data_key, sealed_private_key, wrapping_key_id from vasp_keys where id = $1',
      [old.id],
    );
    expect(rows[0]).toEqual({ wrapped_data_key: null, sealed_private_key: null, wrapping_key_id: null });
    expect((await keystore.loadKeyring(vasp))!.dids).toEqual([next.did]);
    await expect(
      keystore.destroyKey(
        vasp,
        randomBytes(16)
          .toString('hex')
          .replace(/(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'),
        { actor: 'x' },
      ),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(keystore.activateKey(vasp, old.id, { actor: 'x' })).rejects.toThrow(
      /is destroyed; only a pending key can be activated/,
    );
  });

  it('imports KEYS idempotently: twice, or from two processes at once, gives one key per entry', async () => {
    const vasp = randomDid();
    const second = randomDid();
    const records = [
      createDidKeyRecord(randomBytes(32)),
      createDidKeyRecord(randomBytes(32)),
      createDidKeyRecord(randomBytes(32)),
    ];
    const raw = JSON.stringify([
      { vaspDID: vasp, privateKeyHex: records[0]!.keys[0].privateKeyHex },
      { vaspDID: vasp, privateKeyHex: records[1]!.keys[0].privateKeyHex },
      { vaspDID: second, privateKeyHex: records[2]!.keys[0].privateKeyHex },
    ]);
    const dataDir = '/nonexistent-unused';
    const masterKey = master.toString('base64');
    await Promise.all([
      openKeystore(pool, { masterKey, dataDir, agentKeys: raw }),
      openKeystore(pool, { masterKey, dataDir, agentKeys: raw }),
    ]);
    const again = await importAgentKeys(keystore, parseAgentKeys(raw));
    expect(again.map((r) => r.outcome)).toEqual(['already-present', 'already-present', 'already-present']);
    const keys = await listKeys(pool, vasp);
    expect(keys).toHaveLength(2);
    // The first entry of a VASP is the one the agent used: it is active; later ones are kept for decryption.
    expect(keys.find((k) => k.did === records[0]!.did)!.state).toBe('active');
    expect(keys.find((k) => k.did === records[1]!.did)!.state).toBe('retired');
    expect((await listKeys(pool, second)).map((k) => k.state)).toEqual(['active']);
    const audit = await pool.query(
      'select count(*)::int as n from audit_log where subject in ($1, $2) and action = $3',
      [vasp, second, 'key.imported'],
    );
    expect(audit.rows[0].n).toBe(3);

    // The same key under another VASP is refused, naming the entry, and nothing is written.
    const clash = JSON.stringify([{ vaspDID: randomDid(), privateKeyHex: records[0]!.keys[0].privateKeyHex }]);
    await expect(openKeystore(pool, { masterKey, dataDir, agentKeys: clash })).rejects.toThrow(
      /KEYS: KEYS\[0\]: this key is already stored for another VASP/,
    );
  });
});
