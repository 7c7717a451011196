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
import {
  behaviourFor,
  DEFAULT_BEHAVIOUR,
  parseBehaviour,
  stepsOf,
  type Behaviour,
  type BehaviourName,
} from './behaviours';
import { DEFAULT_ORIGINATOR_NAME } from './deposits';
import { sendAsSimulated } from './send';
import {
  depositOriginatorFor,
  finishTask,
  leaseDueTasks,
  queueAct,
  queueAnswerDeposit,
  queueReceive,
  readSim,
  recordReceived,
  type SimRow as Sim,
  type TaskRow as Task,
} from './store';

const ARRIVED = UNANSWERED_NETWORK_STATUSES;
const NOT_YET_SENT = NOT_YET_SENT_NETWORK_STATUSES;

/**
 * Writes a `receive` task when a transfer first reaches a simulated beneficiary (a completed INCOMPLETE message reaches
 * it then too), and an `answerDeposit` task when a notified deposit names a simulated originator that answers. Runs
 * inside the change's transaction.
 */
export async function onTransactionChange(client: PoolClient, event: TransactionEvent): Promise<void> {
  const { tx, previousStatus } = event;
  if (event.change === 'notify' && previousStatus === null && tx.status === 'INCOMPLETE' && tx.originatorVASPdid) {
    const claim = await depositOriginatorFor(client, tx.transactionBlockchainInfo.destination);
    if (claim?.vasp_did === tx.originatorVASPdid && claim.answer.afterSeconds !== null)
      await queueAnswerDeposit(client, claim.vasp_did, tx.id, claim.answer.afterSeconds);
    return;
  }
  if (!tx.beneficiaryVASPdid || !ARRIVED.has(tx.status)) return;
  if (previousStatus !== null && previousStatus !== 'INCOMPLETE' && !NOT_YET_SENT.has(previousStatus)) return;
  await queueReceive(client, tx.beneficiaryVASPdid, tx.id);
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
    const rows = await leaseDueTasks(this.pool, LEASE_SECONDS);
    // One VASP's tasks for one transaction in order; different transactions in parallel.
    await Promise.all(rows.map((task) => this.run(task)));
  }

  private async run(task: Task): Promise<void> {
    let outcome: string;
    try {
      outcome =
        task.kind === 'receive'
          ? await this.receive(task)
          : task.kind === 'answerDeposit'
            ? await this.answerDeposit(task)
            : await this.act(task.vasp_did, task.transaction_id, task.action as BehaviourName);
    } catch (e) {
      outcome = `error: ${(e as Error).message}`;
      this.logger.warn({ err: e, task: task.id }, 'simulated counterparty task failed');
    }
    await finishTask(this.pool, task.id, outcome.slice(0, 1000));
  }

  private async sim(vaspDid: string): Promise<Sim | undefined> {
    return readSim(this.pool, vaspDid);
  }

  private async receive(task: Task): Promise<string> {
    const sim = await this.sim(task.vasp_did);
    if (!sim) return 'no longer simulated';
    const row = await this.transactions.load(this.pool, task.transaction_id);
    if (!row) return 'transaction not found';
    const tx = row.body;
    const result = await this.readPii(task.vasp_did, sim, tx, row.pii_mode);
    await recordReceived(this.pool, {
      vaspDid: task.vasp_did,
      txId: tx.id,
      mode: result.mode,
      decrypted: result.decrypted,
      fields: result.fields,
      error: result.error ?? null,
    });
    const behaviours = Object.fromEntries(
      Object.entries(sim.behaviours)
        .map(([address, b]) => [address, parseBehaviour(b)])
        .filter(([, b]) => typeof b !== 'string'),
    ) as Record<string, Behaviour>;
    const parsedDefault = parseBehaviour(sim.default_behaviour);
    const behaviour = behaviourFor(
      tx.transactionBlockchainInfo.destination,
      behaviours,
      typeof parsedDefault === 'string' ? DEFAULT_BEHAVIOUR : parsedDefault,
    );
    if (behaviour.afterSeconds > 0) {
      await queueAct(this.pool, task.vasp_did, tx.id, behaviour.behaviour, behaviour.afterSeconds);
      return `received; ${behaviour.behaviour} in ${behaviour.afterSeconds}s`;
    }
    return `received; ${await this.act(task.vasp_did, tx.id, behaviour.behaviour)}`;
  }

  /**
   * The simulated originator completes a notified deposit: it sends its transfer for the INCOMPLETE message's blockchain
   * data with tx/create, which completes that message (sandbox/transactions/notify.ts).
   */
  private async answerDeposit(task: Task): Promise<string> {
    const row = await this.transactions.load(this.pool, task.transaction_id);
    if (!row) return 'transaction not found';
    const tx = row.body;
    if (tx.status !== 'INCOMPLETE') return `nothing to do: the message is ${tx.status}`;
    const answer = (await depositOriginatorFor(this.pool, tx.transactionBlockchainInfo.destination))?.answer;
    const [given, family] = answer?.originatorName ?? DEFAULT_ORIGINATOR_NAME;
    const info = tx.transactionBlockchainInfo;
    const sent = await sendAsSimulated(this.pool, this.transactions, {
      originatorVASPdid: task.vasp_did,
      beneficiaryVASPdid: tx.beneficiaryVASPdid,
      transactionAsset: tx.transactionAsset,
      transactionAmount: tx.transactionAmount,
      transactionAssetDecimals: tx.transactionAssetDecimals,
      transactionBlockchainInfo: {
        txHash: info.txHash,
        origin: info.origin || undefined,
        destination: info.destination,
      },
      originator: {
        originatorPersons: [
          {
            naturalPerson: {
              name: [
                {
                  nameIdentifier: [
                    { secondaryIdentifier: given, primaryIdentifier: family, nameIdentifierType: 'LEGL' },
                  ],
                },
              ],
              dateAndPlaceOfBirth: { dateOfBirth: '1984-05-17', placeOfBirth: 'Example City' },
            },
          },
        ],
        ...(info.origin && { accountNumber: [info.origin] }),
      },
    });
    return sent.id === tx.id ? `completed: ${sent.status}` : `sent ${sent.id}, which did not complete ${tx.id}`;
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
      const items = await getItems(
        this.pool,
        leaves.filter((l) => looksLikeCid(l.value)).map((l) => l.value),
        [vaspDid],
      );
      const byCid = new Map(items.map((i) => [i.cid, parseItem(i.data)]));
      const entries: PiiEntry[] = leaves.map((l) => {
        if (!looksLikeCid(l.value)) return l; // an inline encrypted value
        const item = byCid.get(l.value);
        if (!item) throw new Error(`${l.key}: the personal-data service gave no item for this CID`);
        return { key: l.key, value: item.value };
      });
      const record = (did: string, privateKeyHex: string): DidKeyRecord => ({
        did,
        controllerKeyId: privateKeyHex.slice(64),
        services: [],
        provider: 'did:key',
        keys: [
          {
            type: 'Ed25519',
            kid: privateKeyHex.slice(64),
            publicKeyHex: privateKeyHex.slice(64),
            meta: { algorithms: ['Ed25519', 'EdDSA'] },
            kms: 'local',
            privateKeyHex,
          },
        ],
      });
      // The current key, and any it rotated away from (data encrypted before the rotation is still its to read).
      const keys = [
        record(sim.did_key, sim.private_key_hex),
        ...(sim.previous_keys ?? []).map((k) => record(k.did, k.privateKeyHex)),
      ];
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
