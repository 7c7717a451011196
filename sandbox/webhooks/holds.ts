import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

/**
 * Holds back every delivery about `transactionId` to `vaspDid`, those already queued and those queued later, until
 * releaseDeliveries. Held deliveries keep their order and their retries; only their start waits.
 */
export async function holdDeliveries(db: Db, transactionId: string, vaspDid: string): Promise<void> {
  await db.query('insert into webhook_holds (transaction_id, vasp_did) values ($1, $2) on conflict do nothing', [transactionId, vaspDid]);
}

export async function releaseDeliveries(db: Db, transactionId: string): Promise<void> {
  await db.query('delete from webhook_holds where transaction_id = $1', [transactionId]);
}
