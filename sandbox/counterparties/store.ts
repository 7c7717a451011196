/** The SQL of the simulated counterparties: their keys and behaviours, their task queue and what they received. */
import type { Pool, PoolClient } from 'pg';
import type { Behaviour } from './behaviours';
import type { DepositAnswer } from './deposits';

type Db = Pool | PoolClient;

export interface CounterpartyRow {
  did_key: string;
  default_behaviour: Behaviour;
  behaviours: Record<string, Behaviour>;
  /** As the originator of deposits the beneficiary notifies, per destination (deposits.ts). */
  deposits: Record<string, DepositAnswer>;
}

/** Everything the simulator needs of one simulated VASP, its earlier keys included. */
export interface SimRow {
  did_key: string;
  private_key_hex: string;
  previous_keys?: { did: string; privateKeyHex: string }[];
  default_behaviour: unknown;
  behaviours: Record<string, unknown>;
}

export async function isSimulated(db: Db, vaspDid: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from sim_counterparties where vasp_did = $1', [vaspDid]);
  return !!rows[0];
}

/** Replaces the counterparty's key, keeping the current one among its previous keys; false when it is not simulated. */
export async function replaceKey(
  client: PoolClient,
  vaspDid: string,
  did: string,
  privateKeyHex: string,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `update sim_counterparties set previous_keys = previous_keys || jsonb_build_array(jsonb_build_object('did', did_key, 'privateKeyHex', private_key_hex)),
       did_key = $2, private_key_hex = $3, updated_at = now() where vasp_did = $1`,
    [vaspDid, did, privateKeyHex],
  );
  return !!rowCount;
}

/** Whether the directory marks the VASP simulated (undefined: no such VASP), locking its row against deletion. */
export async function vaspSimulatedForShare(client: PoolClient, vaspDid: string): Promise<boolean | undefined> {
  const { rows } = await client.query<{ simulated: boolean }>('select simulated from vasps where did = $1 for share', [
    vaspDid,
  ]);
  return rows[0]?.simulated;
}

export async function readCounterparty(
  db: Db,
  vaspDid: string,
  forUpdate = false,
): Promise<CounterpartyRow | undefined> {
  const { rows } = await db.query<CounterpartyRow>(
    `select did_key, default_behaviour, behaviours, deposits from sim_counterparties where vasp_did = $1${forUpdate ? ' for update' : ''}`,
    [vaspDid],
  );
  return rows[0];
}

/** Changes what was given (undefined keeps the stored value). */
export async function updateCounterparty(
  client: PoolClient,
  vaspDid: string,
  patch: { default?: Behaviour; behaviours?: Record<string, Behaviour>; deposits?: Record<string, DepositAnswer> },
): Promise<CounterpartyRow> {
  const { rows } = await client.query<CounterpartyRow>(
    `update sim_counterparties set default_behaviour = coalesce($2, default_behaviour), behaviours = coalesce($3, behaviours),
       deposits = coalesce($4, deposits), updated_at = now()
     where vasp_did = $1 returning did_key, default_behaviour, behaviours, deposits`,
    [
      vaspDid,
      patch.default ? JSON.stringify(patch.default) : null,
      patch.behaviours ? JSON.stringify(patch.behaviours) : null,
      patch.deposits ? JSON.stringify(patch.deposits) : null,
    ],
  );
  return rows[0]!;
}

export async function insertCounterparty(
  client: PoolClient,
  c: {
    vaspDid: string;
    did: string;
    privateKeyHex: string;
    default: Behaviour;
    behaviours: Record<string, Behaviour>;
    deposits?: Record<string, DepositAnswer>;
  },
): Promise<CounterpartyRow> {
  const { rows } = await client.query<CounterpartyRow>(
    `insert into sim_counterparties (vasp_did, did_key, private_key_hex, default_behaviour, behaviours, deposits)
     values ($1, $2, $3, $4, $5, $6)
     returning did_key, default_behaviour, behaviours, deposits`,
    [
      c.vaspDid,
      c.did,
      c.privateKeyHex,
      JSON.stringify(c.default),
      JSON.stringify(c.behaviours),
      JSON.stringify(c.deposits ?? {}),
    ],
  );
  return rows[0]!;
}

export async function deleteCounterparty(db: Db, vaspDid: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from sim_counterparties where vasp_did = $1', [vaspDid]);
  return !!rowCount;
}

export interface ReceivedRow {
  mode: string;
  decrypted: boolean;
  fields: number;
  error: string | null;
  received_at: Date;
}

export async function readReceived(db: Db, vaspDid: string, txId: string): Promise<ReceivedRow | undefined> {
  const { rows } = await db.query<ReceivedRow>(
    'select mode, decrypted, fields, error, received_at from sim_counterparty_received where vasp_did = $1 and transaction_id = $2',
    [vaspDid, txId],
  );
  return rows[0];
}

export async function recordReceived(
  db: Db,
  r: { vaspDid: string; txId: string; mode: string; decrypted: boolean; fields: number; error: string | null },
): Promise<void> {
  await db.query(
    `insert into sim_counterparty_received (vasp_did, transaction_id, mode, decrypted, fields, error) values ($1, $2, $3, $4, $5, $6)
     on conflict (vasp_did, transaction_id) do update set mode = excluded.mode, decrypted = excluded.decrypted,
       fields = excluded.fields, error = excluded.error, received_at = now()`,
    [r.vaspDid, r.txId, r.mode, r.decrypted, r.fields, r.error],
  );
}

export async function readSim(db: Db, vaspDid: string): Promise<SimRow | undefined> {
  const { rows } = await db.query<SimRow>(
    'select did_key, private_key_hex, previous_keys, default_behaviour, behaviours from sim_counterparties where vasp_did = $1',
    [vaspDid],
  );
  return rows[0];
}

/** Queues the beneficiary's receipt of a transaction when the beneficiary is simulated (nothing otherwise). */
export async function queueReceive(client: PoolClient, vaspDid: string, txId: string): Promise<void> {
  await client.query(
    `insert into sim_counterparty_tasks (vasp_did, transaction_id, kind)
     select vasp_did, $2, 'receive' from sim_counterparties where vasp_did = $1`,
    [vaspDid, txId],
  );
}

export async function queueAct(
  db: Db,
  vaspDid: string,
  txId: string,
  action: string,
  afterSeconds: number,
): Promise<void> {
  await db.query(
    `insert into sim_counterparty_tasks (vasp_did, transaction_id, kind, action, due_at)
     values ($1, $2, 'act', $3, now() + make_interval(secs => $4))`,
    [vaspDid, txId, action, afterSeconds],
  );
}

/**
 * The simulated originator that claims deposits to `destination` (exact, then its master address before `:<tag>`), and
 * its answer; the first VASP by DID when several do.
 */
export async function depositOriginatorFor(
  db: Db,
  destination: string,
): Promise<{ vasp_did: string; answer: DepositAnswer } | undefined> {
  const colon = destination.lastIndexOf(':');
  const master = colon > 0 ? destination.slice(0, colon) : destination;
  const { rows } = await db.query<{ vasp_did: string; answer: DepositAnswer }>(
    `select vasp_did, coalesce(deposits -> $1, deposits -> $2) as answer from sim_counterparties
      where deposits ? $1 or deposits ? $2 order by vasp_did limit 1`,
    [destination, master],
  );
  return rows[0];
}

/** The simulated originator's completion of an INCOMPLETE message, due in `afterSeconds`. */
export async function queueAnswerDeposit(
  client: PoolClient,
  vaspDid: string,
  txId: string,
  afterSeconds: number,
): Promise<void> {
  await client.query(
    `insert into sim_counterparty_tasks (vasp_did, transaction_id, kind, due_at)
     values ($1, $2, 'answerDeposit', now() + make_interval(secs => $3))`,
    [vaspDid, txId, afterSeconds],
  );
}

export interface TaskRow {
  id: string;
  vasp_did: string;
  transaction_id: string;
  kind: 'receive' | 'act' | 'answerDeposit';
  action: string | null;
}

/** Up to 20 due tasks, each leased for `leaseSeconds` (a task whose run dies comes due again). */
export async function leaseDueTasks(db: Db, leaseSeconds: number): Promise<TaskRow[]> {
  const { rows } = await db.query<TaskRow>(
    `with due as (
       select id from sim_counterparty_tasks where done_at is null and due_at <= now()
        order by due_at, id limit 20 for update skip locked)
     update sim_counterparty_tasks t set due_at = now() + make_interval(secs => $1)
       from due where t.id = due.id
     returning t.id, t.vasp_did, t.transaction_id, t.kind, t.action`,
    [leaseSeconds],
  );
  return rows;
}

export async function finishTask(db: Db, id: string, outcome: string): Promise<void> {
  await db.query('update sim_counterparty_tasks set done_at = now(), outcome = $2 where id = $1', [id, outcome]);
}
