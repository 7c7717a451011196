/** A transaction's personal data at the service: the caller's CIDs checked, hosted mode encrypted and decrypted. */
import type { Pool, PoolClient } from 'pg';
import { unflattenIvms101 } from '../../lib/ivms101';
import { badRequest } from '../errors';
import { getItems, looksLikeCid, piiLeaves, putEntries, type PiiEntry } from '../pii-store/store';
import type { TransactionCore } from './core';
import { validationError } from './model';

/** Every CID leaf of a caller's `pii` must be an item the caller may read (put first through /pii/put). */
export async function checkCids(
  core: TransactionCore,
  readerVasps: readonly string[],
  pii: Record<string, unknown>,
): Promise<void> {
  const leaves = piiLeaves(pii, 'pii').filter((l) => looksLikeCid(l.value));
  if (leaves.length === 0) return;
  const found = new Set(
    (
      await getItems(
        core.pool,
        leaves.map((l) => l.value),
        readerVasps,
      )
    ).map((i) => i.cid),
  );
  const missing = leaves.find((l) => !found.has(l.value));
  if (missing) throw validationError(`${missing.key}: unknown content identifier (store it first with POST /pii/put)`);
}

/** Hosted mode, first half: the plain record encrypted with the service-managed keys (nothing stored yet). */
export async function hostedEncrypt(
  core: TransactionCore,
  originator: string,
  beneficiary: string | undefined,
  record: Record<string, unknown>,
): Promise<PiiEntry[]> {
  if (!core.hosted) throw badRequest('NotabeneTransactionError', 'Hosted encryption is not available in this sandbox');
  return core.hosted.encrypt(
    originator,
    beneficiary,
    Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)),
  );
}

/** Hosted mode, second half: the encrypted entries stored through `db` (the transaction that stores their row), as a CID tree. */
export async function storeHosted(
  db: Pool | PoolClient,
  originator: string,
  beneficiary: string | undefined,
  entries: PiiEntry[],
): Promise<Record<string, unknown>> {
  return unflattenIvms101(await putEntries(db, originator, beneficiary ?? originator, entries));
}

/** Hosted mode: encrypt the plain record with the service-managed keys, store it through `db`, answer the CID tree. */
export async function hostedTree(
  core: TransactionCore,
  db: Pool | PoolClient,
  originator: string,
  beneficiary: string | undefined,
  record: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return storeHosted(db, originator, beneficiary, await hostedEncrypt(core, originator, beneficiary, record));
}

/** The plain record of a hosted-mode transaction, decrypted with the service-managed keys of `vaspDids`. */
export async function decryptHosted(
  core: TransactionCore,
  vaspDids: readonly string[],
  pii: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const leaves = piiLeaves(pii).filter((l) => looksLikeCid(l.value));
  const items = await getItems(
    core.pool,
    leaves.map((l) => l.value),
    undefined,
  );
  const byCid = new Map(items.map((i) => [i.cid, i.data]));
  const entries = leaves.flatMap((l) => {
    const data = byCid.get(l.value);
    if (!data) return [];
    const parsed = JSON.parse(data) as PiiEntry;
    return [{ key: l.key, value: parsed.value }];
  });
  return core.hosted!.decrypt(vaspDids, entries);
}

/** The content identifiers among a `pii` tree's leaves. */
export const cidLeaves = (pii: Record<string, unknown>) =>
  piiLeaves(pii)
    .map((l) => l.value)
    .filter(looksLikeCid);
