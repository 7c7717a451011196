/** Who acts on a transaction, and the history every change appends to (a hash chain). */
import { createHash } from 'node:crypto';
import type { Access } from '../auth/access';
import { badRequest, forbidden } from '../errors';
import type { Transaction, TransactionAction } from './model';
import type { TransactionStatus } from './states';

/** Who takes an action: the credential's user DID and the VASPs it may act for. */
export interface Actor {
  issuerDid: string;
  vasps: readonly string[];
}

export const actorOf = (access: Access): Actor => ({ issuerDid: access.userDid, vasps: access.vasps() });

export const invalidStatus = (status: string, action: string) =>
  badRequest('NotabeneTransactionInvalidStatusError', `${status} is not a valid status for action ${action}`);

/**
 * Only the two VASPs of a transaction (and users of their gateways) may read it or act on it; `refuse` makes the
 * refusal (403, or 400 on the routes whose spec documents it so).
 */
export function requireParty(actor: Actor, tx: Transaction, refuse: (message: string) => Error = forbidden): void {
  const parties = [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => !!d);
  if (!parties.some((d) => actor.vasps.includes(d))) {
    throw refuse(`Transaction ${tx.id} belongs to other VASPs`);
  }
}

/** Appends to the action history (a hash chain) and moves the status. */
export function record(
  tx: Transaction,
  issuerDID: string,
  action: string,
  actionData: string,
  status: TransactionStatus,
): void {
  const createdAt = new Date().toISOString();
  const previous = tx.actions[tx.actions.length - 1]?.hash ?? '';
  const hash =
    '0x' +
    createHash('sha256')
      .update(JSON.stringify([previous, tx.id, issuerDID, action, actionData, createdAt, status]))
      .digest('hex');
  const entry: TransactionAction = { hash, issuerDID, action, actionData, createdAt, status };
  tx.actions.push(entry);
  tx.status = status;
  tx.updatedAt = createdAt;
}
