import { loadAddressBookConfig, type AddressBookConfig } from '../../address-book/config';
import type { RunningSandbox } from './platform';

/** A deterministic EVM address: `salt` keeps scenarios (and test files) apart in the one shared registry. */
export const evm = (i: number, salt: string) => `0x${salt}${i.toString(16).padStart(40 - salt.length, '0')}`;

/** Address-book settings for tests: small deltas registered one by one, quick polls, short waits. */
export const addressBookTestSettings = (over: Partial<AddressBookConfig> = {}): AddressBookConfig => ({
  ...loadAddressBookConfig({}),
  registerThreshold: 5,
  pollIntervalMs: 50,
  settleMs: 1500,
  processingTimeoutMs: 30_000,
  ...over,
});

/** What the network holds for a VASP, read from the sandbox's own tables: address → customerRef. */
export async function networkBook(sandbox: RunningSandbox, vasp: string): Promise<Map<string, string>> {
  const { rows } = await sandbox.pool.query<{ address: string; customer_ref: string }>(
    'select address, customer_ref from addresses where vasp_did = $1',
    [vasp],
  );
  return new Map(rows.map((r) => [r.address, r.customer_ref]));
}
