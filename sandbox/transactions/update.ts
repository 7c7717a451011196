/** `tx/update`: which side may change which fields, and in which statuses the beneficiary or destination may move. */
import { NOT_YET_SENT_NETWORK_STATUSES } from '../../lib/network-status';
import type { Access } from '../auth/access';
import { badRequest, forbidden, notFound } from '../errors';
import { addOwners } from '../pii-store/store';
import { OPERATOR_DID } from '../operator';
import type { TransactionCore } from './core';
import { actorOf, invalidStatus, record, requireParty } from './history';
import { BENEFICIARY_UPDATABLE, parseUpdateRequest, validationError, type Transaction } from './model';
import { supersedeIncomplete } from './notify';
import { lockDestinations } from './store/notify';
import { checkCids, cidLeaves, hostedTree } from './personal-data';

export async function updateTransaction(core: TransactionCore, access: Access, body: unknown): Promise<Transaction> {
  const req = parseUpdateRequest(body);
  const actor = actorOf(access);
  const vaspExists = async (did: string) => (await core.vaspName(did)) !== undefined;
  return core.inTransaction(async (client) => {
    if (req.fields.txHash !== undefined) {
      // A txHash may make this message match a notified deposit (notify.ts): the destination lock comes before the row's.
      const current = await core.load(client, req.id);
      const destinations = [current?.body.transactionBlockchainInfo.destination, req.fields.destination];
      await lockDestinations(
        client,
        destinations.filter((d): d is string => typeof d === 'string' && d !== ''),
      );
    }
    const row = await core.load(client, req.id, true);
    if (!row) throw notFound(`Transaction ${req.id} not found`);
    const tx = row.body;
    requireParty(actor, tx);
    const originatorVasp = tx.originatorVASPdid;
    if (tx.status === 'INCOMPLETE' || !originatorVasp) {
      // The beneficiary's report of a deposit: the originator completes it with tx/create (notify.ts), not field by field.
      throw badRequest(
        'NotabeneTransactionInvalidStatusError',
        `${tx.status} is not a valid status for action update: a notified deposit is completed by the originator's tx/create`,
      );
    }
    const isOriginator = actor.vasps.includes(originatorVasp);
    if (!isOriginator) {
      const refused = Object.keys(req.fields).find((f) => !(BENEFICIARY_UPDATABLE as readonly string[]).includes(f));
      if (refused) throw forbidden(`Only the originator VASP may update ${refused}`);
    }
    const f = req.fields;
    const previousStatus = tx.status;
    if (f.originatorVASPdid !== undefined && f.originatorVASPdid !== tx.originatorVASPdid) {
      throw validationError('originatorVASPdid: cannot be changed; create a new transaction instead');
    }
    let piiMode = row.pii_mode;
    const changed = Object.keys(f).filter((k) => k !== 'originatorVASPdid');
    if (f.beneficiaryVASPdid !== undefined && f.beneficiaryVASPdid !== tx.beneficiaryVASPdid) {
      if (!NOT_YET_SENT_NETWORK_STATUSES.has(tx.status)) {
        throw invalidStatus(tx.status, 'update of beneficiaryVASPdid');
      }
      tx.beneficiaryVASPdid = f.beneficiaryVASPdid as string;
      const name = await core.vaspName(tx.beneficiaryVASPdid);
      if (name !== undefined && f.beneficiaryVASPname === undefined) tx.beneficiaryVASPname = name;
    }
    const info = tx.transactionBlockchainInfo;
    if (f.txHash !== undefined) info.txHash = f.txHash as string;
    if (f.origin !== undefined) info.origin = f.origin as string;
    if (f.destination !== undefined) {
      if (!NOT_YET_SENT_NETWORK_STATUSES.has(tx.status)) {
        if (f.destination !== info.destination) throw invalidStatus(tx.status, 'update of destination');
      }
      info.destination = f.destination as string;
    }
    const copy = [
      'beneficiaryVASPname',
      'originatorDid',
      'beneficiaryDid',
      'originatorRef',
      'beneficiaryRef',
      'notificationEmail',
      'protocol',
      'originatorProof',
      'beneficiaryProof',
      'blockchainTransactionTimestamp',
    ] as const;
    for (const name of copy) if (f[name] !== undefined) (tx as unknown as Record<string, unknown>)[name] = f[name];
    if (f.encrypted !== undefined) tx.ivms101Encrypted = f.encrypted as string;
    if (f.pii !== undefined) {
      await checkCids(core, actor.vasps, f.pii as Record<string, unknown>);
      tx.pii = f.pii as Record<string, unknown>;
      piiMode = 'client';
    } else if (f.originator !== undefined || f.beneficiary !== undefined) {
      if (piiMode === 'client') {
        throw validationError(
          'originator: this transaction carries end-to-end encrypted pii; update pii instead of plain IVMS101',
        );
      }
      const tree = await hostedTree(core, client, originatorVasp, tx.beneficiaryVASPdid, {
        originator: f.originator,
        beneficiary: f.beneficiary,
      });
      tx.pii = { ...(tx.pii ?? {}), ...tree };
      piiMode = 'hosted';
    }
    record(tx, actor.issuerDid, 'update', changed.join(','), tx.status);
    if (tx.status === 'WAITING_FOR_INFORMATION' && tx.beneficiaryVASPdid && (await vaspExists(tx.beneficiaryVASPdid))) {
      record(tx, OPERATOR_DID, 'approve', 'automatic: the beneficiary VASP is now known', 'SENT');
    }
    if (tx.pii && tx.beneficiaryVASPdid)
      await addOwners(client, cidLeaves(tx.pii), originatorVasp, tx.beneficiaryVASPdid);
    await core.save(client, tx, piiMode);
    await core.emit(client, { tx, previousStatus, change: 'update' });
    if (f.txHash !== undefined && isOriginator) await supersedeIncomplete(core, client, tx);
    return tx;
  });
}
