/**
 * What every job on transactions shares: the pool, the stored row, the listeners that run in the same database
 * transaction as a change (the webhook outbox, the simulated counterparties' tasks), and hosted-mode encryption.
 */
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../../db/transaction';
import type { Logger } from '../../lib/logger';
import { getVaspSettings } from '../directory/profiles';
import { gatewayOf, vaspName } from '../directory/store';
import type { PiiEntry } from '../pii-store/store';
import type { Transaction } from './model';
import type { TransactionStatus } from './states';
import type { DepositOriginatorResolver } from './notify';
import { loadTransaction, saveTransaction, type TransactionRow } from './store';

export interface TransactionEvent {
  tx: Transaction;
  previousStatus: TransactionStatus | null;
  /** `create`, `update`, or the action's name. */
  change: string;
}

/** Runs inside the database transaction that stores the change. */
export type TransactionListener = (client: PoolClient, event: TransactionEvent) => Promise<void>;

/** The service-managed encryption of hosted mode (implemented in sandbox/pii-store/hosted.ts). */
export interface HostedCrypto {
  /** Encrypts every flattened value of `record` for the originator's and beneficiary's service-managed keys. */
  encrypt(
    originatorVasp: string,
    beneficiaryVasp: string | undefined,
    record: Record<string, unknown>,
  ): Promise<PiiEntry[]>;
  /** Decrypts entries with the service-managed keys (current and rotated) of the first of `vaspDids` that can. */
  decrypt(vaspDids: readonly string[], entries: readonly PiiEntry[]): Promise<Record<string, unknown>>;
}

export type Row = TransactionRow;

export class TransactionCore {
  private readonly listeners: TransactionListener[] = [];
  /** Asked in turn who a notified deposit comes from (tx/notify, notify.ts); the first answer is taken. */
  readonly depositOriginators: DepositOriginatorResolver[] = [];
  hosted?: HostedCrypto;

  constructor(
    readonly pool: Pool,
    readonly logger: Logger,
  ) {}

  onChange(listener: TransactionListener): void {
    this.listeners.push(listener);
  }

  onDeposit(resolver: DepositOriginatorResolver): void {
    this.depositOriginators.push(resolver);
  }

  async load(db: Pool | PoolClient, id: string, forUpdate = false): Promise<Row | undefined> {
    return loadTransaction(db, id, forUpdate);
  }

  async save(client: PoolClient, tx: Transaction, piiMode: Row['pii_mode']): Promise<void> {
    await saveTransaction(client, tx, piiMode);
  }

  /** Automatic confirmation follows the `autoconfirm` setting, which a gateway holds for its subsidiaries. */
  async autoconfirm(beneficiary: string): Promise<boolean> {
    return (await getVaspSettings(this.pool, (await gatewayOf(this.pool, beneficiary)) ?? beneficiary)).autoconfirm;
  }

  async vaspName(did: string, db: Pool | PoolClient = this.pool): Promise<string | undefined> {
    return vaspName(db, did);
  }

  async emit(client: PoolClient, event: TransactionEvent): Promise<void> {
    for (const listener of this.listeners) await listener(client, event);
  }

  inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work);
  }
}
