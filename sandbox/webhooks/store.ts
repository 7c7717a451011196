/** The SQL of the webhooks: each VASP's registration, the deliveries queued for them and the holds on deliveries. */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

/**
 * Holds back every delivery about `transactionId` to `vaspDid`, those already queued and those queued later, until
 * releaseDeliveries. Held deliveries keep their order and their retries; only their start waits.
 */
export async function holdDeliveries(db: Db, transactionId: string, vaspDid: string): Promise<void> {
  await db.query('insert into webhook_holds (transaction_id, vasp_did) values ($1, $2) on conflict do nothing', [
    transactionId,
    vaspDid,
  ]);
}

export async function releaseDeliveries(db: Db, transactionId: string): Promise<void> {
  await db.query('delete from webhook_holds where transaction_id = $1', [transactionId]);
}

/** Registers the VASP's webhook, or replaces its URL; the secret is replaced only when `rotate`. */
export async function upsertWebhook(
  db: Db,
  vaspDid: string,
  url: string,
  secret: string,
  rotate: boolean,
): Promise<{ url: string; secret: string }> {
  const { rows } = await db.query<{ url: string; secret: string }>(
    `insert into webhooks (vasp_did, url, secret) values ($1, $2, $3)
     on conflict (vasp_did) do update set url = excluded.url, updated_at = now(),
       secret = case when $4 then excluded.secret else webhooks.secret end
     returning url, secret`,
    [vaspDid, url, secret, rotate],
  );
  return rows[0]!;
}

export async function webhookUrl(db: Db, vaspDid: string): Promise<string | undefined> {
  const { rows } = await db.query<{ url: string }>('select url from webhooks where vasp_did = $1', [vaspDid]);
  return rows[0]?.url;
}

export async function deleteWebhook(db: Db, vaspDid: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from webhooks where vasp_did = $1', [vaspDid]);
  return !!rowCount;
}

export async function readDeliveries(db: Db, vaspDid: string | undefined, transactionId: string | undefined) {
  const { rows } = await db.query(
    `select message_id as "messageId", vasp_did as "vaspDID", event, transaction_id as "transactionId", state, attempts,
            last_status as "lastStatus", last_error as "lastError", created_at as "createdAt", finished_at as "finishedAt"
       from webhook_deliveries
      where ($1::text is null or vasp_did = $1) and ($2::uuid is null or transaction_id = $2)
      order by id limit 1000`,
    [vaspDid ?? null, transactionId ?? null],
  );
  return rows;
}

/** The VASPs among `parties` and their gateways that have a webhook. */
export async function subscribersOf(client: PoolClient, parties: string[]): Promise<string[]> {
  const { rows } = await client.query<{ vasp_did: string }>(
    `select w.vasp_did from webhooks w
      where w.vasp_did = any($1)
         or w.vasp_did in (select parent_did from vasps where did = any($1) and parent_did is not null)`,
    [parties],
  );
  return rows.map((r) => r.vasp_did);
}

export async function queueDelivery(
  client: PoolClient,
  d: { messageId: string; vaspDid: string; event: string; transactionId: string; body: string },
): Promise<void> {
  await client.query(
    `insert into webhook_deliveries (message_id, vasp_did, event, transaction_id, body) values ($1, $2, $3, $4, $5)`,
    [d.messageId, d.vaspDid, d.event, d.transactionId, d.body],
  );
}

export interface DueDelivery {
  id: string;
  message_id: string;
  vasp_did: string;
  body: string;
  attempts: number;
  url: string | null;
  secret: string | null;
}

/** Up to `batch` pending deliveries due and not held, each leased for `leaseSeconds`, with their VASP's webhook. */
export async function leaseDueDeliveries(db: Db, batch: number, leaseSeconds: number): Promise<DueDelivery[]> {
  const { rows } = await db.query<DueDelivery>(
    `with due as (
       select id from webhook_deliveries d
        where state = 'pending' and next_attempt_at <= now()
          and not exists (select 1 from webhook_holds h where h.transaction_id = d.transaction_id and h.vasp_did = d.vasp_did)
        order by next_attempt_at, id limit $1 for update skip locked)
     update webhook_deliveries d set next_attempt_at = now() + make_interval(secs => $2)
       from due where d.id = due.id
     returning d.id, d.message_id, d.vasp_did, d.body, d.attempts,
       (select url from webhooks w where w.vasp_did = d.vasp_did) as url,
       (select secret from webhooks w where w.vasp_did = d.vasp_did) as secret`,
    [batch, leaseSeconds],
  );
  return rows;
}

export async function postponeDelivery(db: Db, id: string, seconds: number): Promise<void> {
  await db.query('update webhook_deliveries set next_attempt_at = now() + make_interval(secs => $2) where id = $1', [
    id,
    seconds,
  ]);
}

export async function recordFailedAttempt(
  db: Db,
  id: string,
  attempts: number,
  status: number,
  error: string,
  retryInSeconds: number,
): Promise<void> {
  await db.query(
    `update webhook_deliveries set attempts = $2, last_status = $3, last_error = $4,
       next_attempt_at = now() + make_interval(secs => $5) where id = $1`,
    [id, attempts, status, error, retryInSeconds],
  );
}

export async function finishDelivery(
  db: Db,
  id: string,
  state: string,
  status: number | null,
  error: string | null,
  attempts: number | null,
): Promise<void> {
  await db.query(
    `update webhook_deliveries set state = $2, last_status = $3, last_error = $4, attempts = coalesce($5, attempts),
       finished_at = now() where id = $1`,
    [id, state, status, error, attempts],
  );
}
