/** The SQL of the escrow keys: each VASP's active key and the retired ones, their seeds sealed. */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

export async function activeEscrowDid(db: Db, vaspDid: string): Promise<string | undefined> {
  const { rows } = await db.query<{ did_key: string }>(
    `select did_key from escrow_keys where vasp_did = $1 and state = 'active'`,
    [vaspDid],
  );
  return rows[0]?.did_key;
}

export async function retireActiveEscrowKey(client: PoolClient, vaspDid: string): Promise<void> {
  await client.query(
    `update escrow_keys set state = 'retired', retired_at = now() where vasp_did = $1 and state = 'active'`,
    [vaspDid],
  );
}

/** Every escrow key of the VASP, oldest first. */
export async function sealedEscrowKeys(db: Db, vaspDid: string): Promise<{ did_key: string; sealed_seed: Buffer }[]> {
  const { rows } = await db.query<{ did_key: string; sealed_seed: Buffer }>(
    'select did_key, sealed_seed from escrow_keys where vasp_did = $1 order by id',
    [vaspDid],
  );
  return rows;
}

export async function insertActiveEscrowKey(
  client: PoolClient,
  vaspDid: string,
  did: string,
  sealedSeed: Buffer,
): Promise<void> {
  await client.query(`insert into escrow_keys (vasp_did, did_key, state, sealed_seed) values ($1, $2, 'active', $3)`, [
    vaspDid,
    did,
    sealedSeed,
  ]);
}
