import type { Pool } from 'pg';
import { checkEntry } from '../address-book/entry';
import { ConflictError } from '../lib/errors';
import { upsertEntries } from '../address-book/store/registry';
import { findRegistryOwner } from '../address-book/store/registry-owner';

/**
 * A person routed a transfer nobody owned, and the network registers the address to that subsidiary when it is
 * confirmed. The group's registry is the address book's source of truth, so the address joins it too; otherwise the
 * next reconciliation would delete it from the network again.
 */
export async function recordRoutedAddress(
  pool: Pool,
  input: { asset: string; destination: string; subsidiaryDid: string; transactionId: string },
): Promise<'recorded' | 'skipped'> {
  const checked = checkEntry(
    {
      asset: input.asset,
      address: input.destination,
      customerRef: `routed:${input.transactionId}`,
      vaspDID: input.subsidiaryDid,
    },
    new Set([input.subsidiaryDid]),
  );
  if (!checked.ok) return 'skipped';
  try {
    await upsertEntries(pool, [checked.value]);
    return 'recorded';
  } catch (e) {
    if (e instanceof ConflictError) return 'skipped';
    throw e;
  }
}

/** The subsidiary whose registry holds the transfer's destination address; null when none does (or there is no address). */
export async function findAddressOwner(
  pool: Pool,
  input: { address: string; subsidiaryDids: string[] },
): Promise<string | null> {
  if (!input.address) return null;
  return (await findRegistryOwner(pool, input.address, input.subsidiaryDids)) ?? null;
}
