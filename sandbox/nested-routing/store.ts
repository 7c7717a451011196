/** The SQL of nested routing: the routing tasks of messages sent to a gateway, and the subsidiaries' address webhooks. */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

/** Queues the routing of a message sent to a gateway; false when it is already queued. */
export async function queueRoutingTask(client: PoolClient, transactionId: string, gateway: string): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into routing_tasks (transaction_id, gateway_did) values ($1, $2) on conflict (transaction_id) do nothing`,
    [transactionId, gateway],
  );
  return !!rowCount;
}

export interface RoutingTask {
  transaction_id: string;
  gateway_did: string;
  attempts: number;
}

/** Takes the next due task, counting the attempt and putting it out of reach for 30 seconds should this one die. */
export async function claimDueRoutingTask(db: Db): Promise<RoutingTask | undefined> {
  const { rows } = await db.query<RoutingTask>(
    `update routing_tasks set attempts = attempts + 1, next_at = now() + interval '30 seconds', updated_at = now()
      where transaction_id = (select transaction_id from routing_tasks where state = 'pending' and next_at <= now()
                              order by next_at limit 1 for update skip locked)
      returning transaction_id, gateway_did, attempts`,
  );
  return rows[0];
}

export async function finishRoutingTask(db: Db, transactionId: string, outcome: string): Promise<void> {
  await db.query(
    `update routing_tasks set state = 'done', outcome = $2, updated_at = now() where transaction_id = $1`,
    [transactionId, outcome],
  );
}

export async function retryRoutingTask(
  db: Db,
  transactionId: string,
  delaySeconds: number,
  outcome: string,
): Promise<void> {
  await db.query(
    `update routing_tasks set next_at = now() + make_interval(secs => $2), outcome = $3 where transaction_id = $1`,
    [transactionId, delaySeconds, outcome],
  );
}

export interface AddressQueryWebhook {
  url: string;
  params: string;
  secret: string;
}

/** Registers the VASP's address webhook, replacing an earlier one. */
export async function upsertAddressQueryWebhook(db: Db, vaspDid: string, hook: AddressQueryWebhook): Promise<void> {
  await db.query(
    `insert into address_query_webhooks (vasp_did, url, params, secret) values ($1, $2, $3, $4)
     on conflict (vasp_did) do update set url = excluded.url, params = excluded.params, secret = excluded.secret, created_at = now()`,
    [vaspDid, hook.url, hook.params, hook.secret],
  );
}

export async function deleteAddressQueryWebhook(db: Db, vaspDid: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from address_query_webhooks where vasp_did = $1', [vaspDid]);
  return !!rowCount;
}

export async function addressQueryWebhook(db: Db, vaspDid: string): Promise<AddressQueryWebhook | undefined> {
  const { rows } = await db.query<AddressQueryWebhook>(
    'select url, params, secret from address_query_webhooks where vasp_did = $1',
    [vaspDid],
  );
  return rows[0];
}
