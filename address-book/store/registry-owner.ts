import type { Pool } from 'pg';
import { normalizeAddressAndTag } from '../entry';

/**
 * Which subsidiary of the group owns a destination address, from the registry: the exact `<address>:<tag>` first,
 * then the master address (some senders put the tag in `accountNumber` instead).
 * Undefined when nobody owns it, or when two subsidiaries claim it (a person must decide).
 */
export async function findRegistryOwner(
  pool: Pool,
  destination: string,
  subsidiaryDids: readonly string[],
): Promise<string | undefined> {
  const parsed = normalizeAddressAndTag(destination, undefined);
  if (!parsed.ok) return undefined;
  const { address, tag } = parsed.value;
  const { rows } = await pool.query<{ vasp_did: string; exact: boolean }>(
    `select distinct vasp_did, tag = $2 as exact from address_registry
      where address = $1 and (tag = $2 or tag = '' or $2 = '') and vasp_did = any($3)`,
    [address, tag, subsidiaryDids],
  );
  const exact = [...new Set(rows.filter((r) => r.exact).map((r) => r.vasp_did))];
  const any = [...new Set(rows.map((r) => r.vasp_did))];
  const owners = exact.length > 0 ? exact : any;
  return owners.length === 1 ? owners[0] : undefined;
}
