/**
 * What the network pushes, and to whom: on every change of a transaction, the envelope
 * `{message: 'notification.transactionUpdated', payload: {transaction}, version: '1'}` with the Transaction minus its
 * personal data (`pii`, `ivms101`, `ivms101Encrypted` were removed from webhook payloads; fetch them with tx/info).
 *
 * Recipients: the webhooks of the originator VASP and of the beneficiary VASP, and of their gateways (the notification
 * webhook is typically set on the gateway), one delivery per registered webhook. The beneficiary side hears of a transaction only once it has been sent to it (not while NEW or WAITING_FOR_INFORMATION).
 * Deliveries are written to the outbox in the database transaction that stores the change.
 */
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { NOT_YET_SENT_NETWORK_STATUSES } from '../../lib/network-status';
import { queueDelivery, subscribersOf } from './store';
import type { Transaction, TransactionEvent } from '../transactions';

export const TRANSACTION_UPDATED = 'notification.transactionUpdated';
export const ENVELOPE_VERSION = '1';

const NOT_YET_SENT = NOT_YET_SENT_NETWORK_STATUSES;

/** The Transaction as webhooks carry it: without personal data. */
export function webhookTransaction(tx: Transaction): Omit<Transaction, 'pii' | 'ivms101' | 'ivms101Encrypted'> {
  const { pii: _pii, ivms101: _ivms101, ivms101Encrypted: _enc, ...rest } = tx;
  return rest;
}

export function envelope(tx: Transaction): string {
  return JSON.stringify({
    message: TRANSACTION_UPDATED,
    payload: { transaction: webhookTransaction(tx) },
    version: ENVELOPE_VERSION,
  });
}

export async function enqueueTransactionUpdated(client: PoolClient, event: TransactionEvent): Promise<void> {
  const { tx, previousStatus } = event;
  // An INCOMPLETE message (tx/notify) may have no originator VASP yet.
  const parties = tx.originatorVASPdid ? [tx.originatorVASPdid] : [];
  const beneficiarySees =
    !NOT_YET_SENT.has(tx.status) || (previousStatus !== null && !NOT_YET_SENT.has(previousStatus));
  if (tx.beneficiaryVASPdid && beneficiarySees) parties.push(tx.beneficiaryVASPdid);
  const subscribers = await subscribersOf(client, parties);
  if (subscribers.length === 0) return;
  const body = envelope(tx);
  for (const vaspDid of subscribers) {
    await queueDelivery(client, {
      messageId: `msg_${randomUUID().replace(/-/g, '')}`,
      vaspDid,
      event: TRANSACTION_UPDATED,
      transactionId: tx.id,
      body,
    });
  }
}
