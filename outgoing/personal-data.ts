/**
 * The personal data of an outgoing transfer: encrypted here from the originator's key to the plan's recipients, stored
 * at the network's personal-data service once, and read back (decrypted with the keys held here) for the agent.
 */
import { encryptPiiValue, piiRecipients, type LocalDidKey } from '../lib/crypto';
import { ValidationError } from '../lib/errors';
import { decryptIvms101, flattenIvms101, unflattenIvms101, type FlatEntry } from '../lib/ivms101';
import type { StoredPii, TransferRow } from './store';
import { getPii, putPii } from '../network/pii';
import type { NetworkTransaction } from '../network/transactions';
import { activeKey, type TransferContext } from './context';
import type { TransferPlan } from './plan';
import type { OutgoingRequest } from './request';
import { leavesToSend, type StoredClassification } from './validate';

/**
 * The personal data a transfer sends: all of it, unless its stored classification (BELOW_THRESHOLD, NON_CUSTODIAL)
 * names the only fields the rules require at its amount. Transfers without a classification send all of it.
 */
export function recordToSend(
  request: OutgoingRequest,
  classification: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const record = { originator: request.body.originator, beneficiary: request.body.beneficiary };
  const c = classification as StoredClassification | undefined;
  if (!c || !Array.isArray(c.personalData)) return record;
  return unflattenIvms101(leavesToSend(flattenIvms101(record), c));
}

/** Encrypts every value of `record` ({originator, beneficiary}) from `sender` to the recipients, flattened. */
export function encryptRecord(
  record: Record<string, unknown>,
  sender: LocalDidKey,
  recipients: readonly string[],
): FlatEntry[] {
  const keys = piiRecipients(sender, recipients);
  const now = Date.now();
  return flattenIvms101(record).map(({ key, value }) => ({ key, value: encryptPiiValue(value, sender, keys, now) }));
}

/** Stores the encrypted values at the personal-data service; answers their CIDs, rebuilt into the IVMS101-shaped `pii` tree. */
export async function storeEncrypted(
  ctx: TransferContext,
  fromDid: string,
  toDid: string,
  entries: FlatEntry[],
): Promise<Record<string, unknown>> {
  const list = await putPii(ctx.network, fromDid, toDid, entries);
  if (!Array.isArray(list) || list.length !== entries.length) {
    throw new ValidationError(
      'pii',
      `the personal-data service answered ${Array.isArray(list) ? list.length : 'no'} CIDs for ${entries.length} values`,
    );
  }
  return unflattenIvms101(list.map((e: { key: string; value: string }) => ({ key: e.key, value: e.value })));
}

/**
 * Encrypts the request's personal data for the plan and stores it at the personal-data service, once: a retry finds
 * the CIDs stored by the first attempt and reuses them. The encrypted values are kept with the transfer before the
 * put, so an attempt that crashed after the put but before recording the CIDs is retried with the same bytes: the
 * content-addressed store answers the same CIDs and holds the data once. `stored` is the transfer's row when the
 * caller has just read it.
 */
export async function storePii(
  ctx: TransferContext,
  id: string,
  request: OutgoingRequest,
  plan: TransferPlan,
  stored?: TransferRow,
): Promise<StoredPii | undefined> {
  if (plan.mode === 'hosted') return undefined;
  const row = stored ?? (await ctx.store.get(id));
  if (row.pii) return row.pii;
  const sender = await activeKey(ctx, plan.originatorVaspDid);
  if (!sender) throw new ValidationError('originatorVASPdid', 'has no active key in the keystore');
  const pending = await ctx.store.setPendingPii(id, {
    fromDid: plan.originatorVaspDid,
    toDid: plan.beneficiaryVaspDid ?? plan.originatorVaspDid,
    mode: plan.mode,
    recipients: [sender.did, ...plan.recipients],
    entries: encryptRecord(recordToSend(request, row.classification), sender, plan.recipients),
  });
  const tree = await storeEncrypted(ctx, pending.fromDid, pending.toDid, pending.entries);
  return ctx.store.setPii(id, { tree, mode: pending.mode, recipients: pending.recipients });
}

/**
 * Decrypts the transaction's `pii` with the keys of `vaspDid` (or, without it, of whichever party's keys are held
 * here) and puts the record into `ivms101`. Without usable keys the transaction is returned as it is, as the agent does
 * for a VASP not in KEYS.
 */
export async function decryptTransaction(
  ctx: TransferContext,
  tx: NetworkTransaction,
  vaspDid?: string,
): Promise<NetworkTransaction> {
  return (await decryptTransactionWith(ctx, tx, vaspDid)).tx;
}

/** decryptTransaction, and whose keys decrypted it (absent: nothing was decrypted), which the read's audit row names. */
export async function decryptTransactionWith(
  ctx: TransferContext,
  tx: NetworkTransaction,
  vaspDid?: string,
): Promise<{ tx: NetworkTransaction; decryptedWith?: string }> {
  if (!tx.pii || typeof tx.pii !== 'object') return { tx };
  const candidates = vaspDid
    ? [vaspDid]
    : [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => typeof d === 'string');
  for (const did of candidates) {
    const keyring = await ctx.keystore.loadKeyring(did);
    if (!keyring) continue;
    const refs = flattenIvms101(tx.pii);
    if (refs.length === 0) return { tx };
    const entries: FlatEntry[] = await getPii(
      ctx.network,
      refs.map((r) => r.value),
    );
    const { record } = decryptIvms101(entries, keyring);
    return { tx: { ...tx, ivms101: { ...(tx.ivms101 ?? {}), ...record } }, decryptedWith: did };
  }
  return { tx };
}
