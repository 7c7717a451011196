/**
 * The network's side of transactions, one module per job: create (create.ts), info and hosted decryption
 * (personal-data.ts), update (update.ts), list (list.ts), deposits the beneficiary reports (notify.ts), and here the actions of the state machine (states.ts) and
 * the changes other parts of the network make. Every change is saved in one database transaction together with
 * whatever the registered listeners add (core.ts), so a change is never reported without being stored, nor stored
 * without being reported.
 */
import type { PoolClient } from 'pg';
import type { Access } from '../auth/access';
import { forbidden, notAdmin, notFound } from '../errors';
import { TransactionCore } from './core';
import { createTransaction } from './create';
import { actorOf, invalidStatus, record, requireParty, type Actor } from './history';
import { listTransactions } from './list';
import { isUuid, validationError, type Transaction } from './model';
import { notifyDeposit } from './notify';
import { decryptHosted } from './personal-data';
import { nextStatus, TRANSITIONS, type TransactionActionName, type TransactionStatus } from './states';
import { updateTransaction } from './update';

export { actorOf, invalidStatus, requireParty, type Actor } from './history';
export type { HostedCrypto, TransactionEvent, TransactionListener } from './core';

export class TransactionService extends TransactionCore {
  create(access: Access, body: unknown): Promise<Transaction> {
    return createTransaction(this, access, body);
  }

  async info(access: Access, id: unknown): Promise<Transaction> {
    if (id === undefined || id === '') throw validationError('List of missing fields: id');
    if (!isUuid(id)) throw validationError('id: must be a transaction id (UUID)');
    const row = await this.load(this.pool, id);
    if (!row) throw notFound(`Transaction ${id} not found`);
    const actor = actorOf(access);
    requireParty(actor, row.body);
    const tx = row.body;
    if (row.pii_mode === 'hosted' && tx.pii && this.hosted) {
      const parties = [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => !!d);
      // The reader's own key first; the service holds both owners' keys and may use the other one.
      try {
        tx.ivms101 = await this.decryptHosted([...parties.filter((d) => actor.vasps.includes(d)), ...parties], tx.pii);
      } catch (err) {
        // The transaction is still answered; its personal data is left out rather than failing the read.
        this.logger.warn({ err, transactionId: tx.id }, 'hosted personal data could not be decrypted');
      }
    }
    return tx;
  }

  /** The plain record of a hosted-mode transaction, decrypted with the service-managed keys of `vaspDids`. */
  decryptHosted(vaspDids: readonly string[], pii: Record<string, unknown>): Promise<Record<string, unknown>> {
    return decryptHosted(this, vaspDids, pii);
  }

  /** tx/notify (notify.ts): the matching message, or a new INCOMPLETE one, answered as tx/info answers it. */
  async notify(access: Access, body: unknown): Promise<Transaction> {
    return this.info(access, await notifyDeposit(this, access, body));
  }

  update(access: Access, body: unknown): Promise<Transaction> {
    return updateTransaction(this, access, body);
  }

  list(access: Access, query: Record<string, unknown>) {
    return listTransactions(this.pool, access, query);
  }

  /** Takes `action` on transaction `id` as `actor`; the transition table decides (states.ts). */
  async act(actor: Actor, id: unknown, action: TransactionActionName, reason?: string): Promise<Transaction> {
    if (id === undefined || id === '') throw validationError('List of missing fields: id');
    if (!isUuid(id)) throw validationError('id: must be a transaction id (UUID)');
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1024)) {
      throw validationError('reason: must be a string of at most 1024 characters');
    }
    return this.inTransaction(async (client) => {
      const row = await this.load(client, id, true);
      if (!row) throw notFound(`Transaction ${id} not found`);
      const tx = row.body;
      // The spec documents this refusal for tx/approve only, under 400; the other actions document none.
      const refuse = action === 'approve' ? notAdmin : forbidden;
      requireParty(actor, tx, refuse);
      const rule = TRANSITIONS[action];
      const sideVasp = rule.by === 'originator' ? tx.originatorVASPdid : tx.beneficiaryVASPdid;
      if (!sideVasp || !actor.vasps.includes(sideVasp)) {
        throw refuse(`Only the ${rule.by} VASP of transaction ${tx.id} may ${action} it`);
      }
      const beneficiaryKnown =
        !!tx.beneficiaryVASPdid && (await this.vaspName(tx.beneficiaryVASPdid, client)) !== undefined;
      const next = nextStatus(action, tx.status, beneficiaryKnown);
      if (!next) throw invalidStatus(tx.status, action);
      const previousStatus = tx.status;
      record(tx, actor.issuerDid, action, reason ?? '', next);
      await this.save(client, tx, row.pii_mode);
      await this.emit(client, { tx, previousStatus, change: action });
      return tx;
    });
  }

  /**
   * For other parts of the network that move a transaction outside the action table (e.g. a gateway redirecting to a
   * subsidiary): `mutate` changes `tx` under the row lock and names the step; the step is recorded in the history,
   * stored, and reported to the listeners (webhooks, simulated counterparties) in the same database transaction.
   * Returning undefined leaves the transaction unchanged.
   */
  async applyChange(
    id: string,
    change: string,
    mutate: (
      tx: Transaction,
      client: PoolClient,
    ) => Promise<{ issuerDid: string; actionData?: string; status?: TransactionStatus } | undefined>,
  ): Promise<Transaction> {
    return this.inTransaction(async (client) => {
      const row = await this.load(client, id, true);
      if (!row) throw notFound(`Transaction ${id} not found`);
      const tx = row.body;
      const previousStatus = tx.status;
      const step = await mutate(tx, client);
      if (!step) return tx;
      record(tx, step.issuerDid, change, step.actionData ?? '', step.status ?? tx.status);
      await this.save(client, tx, row.pii_mode);
      await this.emit(client, { tx, previousStatus, change });
      return tx;
    });
  }
}
