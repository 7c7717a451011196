/**
 * The simulated counterparties at work (behaviours.ts says what they do). When a transfer reaches a simulated
 * beneficiary VASP (status SENT or ACK), a `receive` task is written in the same database transaction; a poller runs
 * due tasks: `receive` reads and decrypts the personal data as that VASP would (fetching the CIDs as their owner and
 * decrypting with its own did:key), records the result, then acts now or schedules an `act` task for later.
 */
import { BackgroundLoop } from '../background-loop';
import type { Pool, PoolClient } from 'pg';
import { Keyring, type DidKeyRecord } from '../../lib/crypto';
import { decryptIvms101, flattenIvms101 } from '../../lib/ivms101';
import type { Logger } from '../../lib/logger';
import { NOT_YET_SENT_NETWORK_STATUSES, UNANSWERED_NETWORK_STATUSES } from '../../lib/network-status';
import { NetworkError } from '../errors';
import { getItems, looksLikeCid, parseItem, piiLeaves, type PiiEntry } from '../pii-store/store';
import type { Transaction, TransactionEvent, TransactionService } from '../transactions';
import { behaviourFor, DEFAULT_BEHAVIOUR, parseBehaviour, stepsOf, type Behaviour, type BehaviourName } from './behaviours';

const ARRIVED = UNANSWERED_NETWORK_STATUSES;
const NOT_YET_SENT = NOT_YET_SENT_NETWORK_STATUSES;

/** Writes a `receive` task when a transfer first reaches a simulated beneficiary. Runs inside the change's transaction. */
export async function onTransactionChange(client: PoolClient, event: TransactionEvent): Promise<void> {
  const { tx, previousStatus } = event;
  if (!tx.beneficiaryVASPdid || !ARRIVED.has(tx.status)) return;
  if (previousStatus !== null && !NOT_YET_SENT.has(previousStatus)) return;
  await client.query(
    `insert into sim_counterparty_tasks (vasp_did, transaction_id, kind)
     select vasp_did, $2, 'receive' from sim_counterparties where vasp_did = $1`,
    [tx.beneficiaryVASPdid, tx.id],
  );
}

interface Task {
  id: string;
  vasp_did: string;
  transaction_id: string;
  kind: 'receive' | 'act';
  action: string | null;
}

interface Sim {
  did_key: string;
  private_key_hex: string;
  previous_keys?: { did: string; privateKeyHex: string }[];
  default_behaviour: unknown;
  behaviours: Record<string, unknown>;
}

const LEASE_SECONDS = 60;

export class CounterpartySimulator {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly pool: Pool,
    private readonly transactions: TransactionService,
    private readonly logger: Logger,
    pollMs = 200,
  ) {
    this.loop = new BackgroundLoop('simulated counterparty round', pollMs, () => this.tick(), logger);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async tick(): Promise<void> {
    const { rows } = await this.pool.query<Task>(
      `with due as (
         select id from sim_counterparty_tasks where done_at is null and due_at <= now()
          order by due_at, id limit 20 for update skip locked)
       update sim_counterparty_tasks t set due_at = now() + make_interval(secs => $1)
         from due where t.id = due.id
       returning t.id, t.vasp_did, t.transaction_id, t.kind, t.action`,
      [LEASE_SECONDS],
    );
    // One VASP's tasks for one transaction in order; different transactions in parallel.
    await Promise.all(rows.map((task) => this.run(task)));
  }

  private async run(task: Task): Promise<void> {
    let outcome: string;
    try {
      outcome = task.kind === 'receive' ? await this.receive(task) : await this.act(task.vasp_did, task.transaction_id, task.action as BehaviourName);
    } catch (e) {
      outcome = `error: ${(e as Error).message}`;
      this.logger.warn({ err: e, task: task.id }, 'simulated counterparty task failed');
    }
    await this.pool.query('update sim_counterparty_tasks set done_at = now(), outcome = $2 where id = $1', [task.id, outcome.slice(0, 1000)]);
  }

  private async sim(vaspDid: string): Promise<Sim | undefined> {
    const { rows } = await this.pool.query<Sim>(
      'select did_key, private_key_hex, previous_keys, default_behaviour, behaviours from sim_counterparties where vasp_did = $1',
      [vaspDid],
    );
    return rows[0];
  }

  private async receive(task: Task): Promise<string> {
    const sim = await this.sim(task.vasp_did);
    if (!sim) return 'no longer simulated';
    const row = await this.transactions.load(this.pool, task.transaction_id);
    if (!row) return 'transaction not found';
    const tx = row.body;
    const result = await this.readPii(task.vasp_did, sim, tx, row.pii_mode);
    await this.pool.query(
      `insert into sim_counterparty_received (vasp_did, transaction_id, mode, decrypted, fields, error) values ($1, $2, $3, $4, $5, $6)
       on conflict (vasp_did, transaction_id) do update set mode = excluded.mode, decrypted = excluded.decrypted,
         fields = excluded.fields, error = excluded.error, received_at = now()`,
      [task.vasp_did, tx.id, result.mode, result.decrypted, result.fields, result.error ?? null],
    );
    const behaviours = Object.fromEntries(
      Object.entries(sim.behaviours).map(([address, b]) => [address, parseBehaviour(b)]).filter(([, b]) => typeof b !== 'string'),
    ) as Record<string, Behaviour>;
    const parsedDefault = parseBehaviour(sim.default_behaviour);
    const behaviour = behaviourFor(tx.transactionBlockchainInfo.destination, behaviours, typeof parsedDefault === 'string' ? DEFAULT_BEHAVIOUR : parsedDefault);
    if (behaviour.afterSeconds > 0) {
      await this.pool.query(
        `insert into sim_counterparty_tasks (vasp_did, transaction_id, kind, action, due_at)
         values ($1, $2, 'act', $3, now() + make_interval(secs => $4))`,
        [task.vasp_did, tx.id, behaviour.behaviour, behaviour.afterSeconds],
      );
      return `received; ${behaviour.behaviour} in ${behaviour.afterSeconds}s`;
    }
    return `received; ${await this.act(task.vasp_did, tx.id, behaviour.behaviour)}`;
  }

  /** Reads the personal data as the counterparty: CIDs fetched as their owner, values decrypted with its own key. */
  private async readPii(vaspDid: string, sim: Sim, tx: Transaction, piiMode: string) {
    if (!tx.pii) return { mode: 'none', decrypted: false, fields: 0 };
    if (piiMode === 'hosted') {
      try {
        const record = await this.transactions.decryptHosted([vaspDid], tx.pii);
        return { mode: 'hosted', decrypted: true, fields: flattenIvms101(record).length };
      } catch (e) {
        return { mode: 'hosted', decrypted: false, fields: 0, error: (e as Error).message };
      }
    }
    try {
      const leaves = piiLeaves(tx.pii);
      const items = await getItems(this.pool, leaves.filter((l) => looksLikeCid(l.value)).map((l) => l.value), [vaspDid]);
      const byCid = new Map(items.map((i) => [i.cid, parseItem(i.data)]));
      const entries: PiiEntry[] = leaves.map((l) => {
        if (!looksLikeCid(l.value)) return l; // an inline encrypted value
        const item = byCid.get(l.value);
        if (!item) throw new Error(`${l.key}: the personal-data service gave no item for this CID`);
        return { key: l.key, value: item.value };
      });
      const record = (did: string, privateKeyHex: string): DidKeyRecord => ({
        did, controllerKeyId: privateKeyHex.slice(64), services: [], provider: 'did:key',
        keys: [{
          type: 'Ed25519', kid: privateKeyHex.slice(64), publicKeyHex: privateKeyHex.slice(64),
          meta: { algorithms: ['Ed25519', 'EdDSA'] }, kms: 'local', privateKeyHex,
        }],
      });
      // The current key, and any it rotated away from (data encrypted before the rotation is still its to read).
      const keys = [record(sim.did_key, sim.private_key_hex), ...(sim.previous_keys ?? []).map((k) => record(k.did, k.privateKeyHex))];
      const { record: plain } = decryptIvms101(entries, Keyring.from(keys));
      return { mode: 'end-to-end', decrypted: true, fields: flattenIvms101(plain).length };
    } catch (e) {
      return { mode: 'end-to-end', decrypted: false, fields: 0, error: (e as Error).message };
    }
  }

  /** Takes the behaviour's steps through the transition table; stops at the first refusal. */
  private async act(vaspDid: string, txId: string, behaviour: BehaviourName): Promise<string> {
    if (!(await this.sim(vaspDid))) return 'no longer simulated';
    const row = await this.transactions.load(this.pool, txId);
    if (!row) return 'transaction not found';
    const actor = { issuerDid: vaspDid, vasps: [vaspDid] };
    const done: string[] = [];
    for (const step of stepsOf(behaviour, row.body.status)) {
      try {
        await this.transactions.act(actor, txId, step, `simulated counterparty: ${behaviour}`);
        done.push(step);
      } catch (e) {
        if (e instanceof NetworkError) return `${[...done, `${step} refused (${e.message})`].join(', ')}`;
        throw e;
      }
    }
    return done.length ? done.join(', ') : behaviour;
  }
}
