import type { Pool, PoolClient } from 'pg';
import { ConflictError } from '../../lib/errors';
import { networkAddress, type RegistryEntry } from '../entry';
import { auditActor, type Principal } from '../../lib/principal';
import { appendAuditEntry } from '../../audit/store';
import { withTransaction } from '../../db/transaction';

type Db = Pick<Pool | PoolClient, 'query'>;

/**
 * Writers of the registry hold this advisory lock shared for their transaction; a reconciliation run takes it
 * exclusively for an instant when it reads the registry's high-water mark, so no write with a lower change_seq can
 * commit after that read.
 */
export const REGISTRY_LOCK = 7241865325823970;

export interface StoredEntry extends RegistryEntry {
  networkAddress: string;
  createdAt: string;
  updatedAt: string;
}

/** A registry write: one transaction holding REGISTRY_LOCK shared (see above). */
const inTransaction = <T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> =>
  withTransaction(pool, async (client) => {
    await client.query('select pg_advisory_xact_lock_shared($1)', [REGISTRY_LOCK]);
    return fn(client);
  });

/**
 * Inserts or updates validated entries, all or nothing. An entry whose (asset, address, tag) belongs to another
 * subsidiary is a conflict (an address has one owner): nothing is written and the error names the entry's index.
 * Only a real change (a new customerRef) moves `updated_at` and `change_seq` (the table's trigger does it).
 * With `by`, the import is audited (counts and VASPs, not the addresses) in the same transaction.
 */
export async function upsertEntries(
  pool: Pool,
  entries: readonly RegistryEntry[],
  field = 'addresses',
  by?: Principal,
): Promise<{ inserted: number; updated: number; unchanged: number }> {
  if (entries.length === 0) return { inserted: 0, updated: 0, unchanged: 0 };
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ inserted: boolean; changed: boolean }>(
      `insert into address_registry as r (asset, address, tag, vasp_did, customer_ref)
       select t.asset, t.address, t.tag, t.vasp_did, t.customer_ref
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) with ordinality
              as t (asset, address, tag, vasp_did, customer_ref, ord)
        order by t.ord
       on conflict (asset, address, tag) do update
         set customer_ref = excluded.customer_ref
         where r.vasp_did = excluded.vasp_did
       returning (xmax = 0) as inserted, (updated_at = now()) as changed`,
      [
        entries.map((e) => e.asset),
        entries.map((e) => e.address),
        entries.map((e) => e.tag),
        entries.map((e) => e.vaspDID),
        entries.map((e) => e.customerRef),
      ],
    );
    if (rows.length !== entries.length) {
      // Some entry hit a row of another VASP: find the first, for an error that names it.
      const { rows: owners } = await client.query<{ asset: string; address: string; tag: string; vasp_did: string }>(
        `select r.asset, r.address, r.tag, r.vasp_did from address_registry r
           join unnest($1::text[], $2::text[], $3::text[], $4::text[]) as t (asset, address, tag, vasp_did)
             on r.asset = t.asset and r.address = t.address and r.tag = t.tag and r.vasp_did <> t.vasp_did`,
        [
          entries.map((e) => e.asset),
          entries.map((e) => e.address),
          entries.map((e) => e.tag),
          entries.map((e) => e.vaspDID),
        ],
      );
      const taken = new Map(owners.map((o) => [`${o.asset}\u0000${o.address}\u0000${o.tag}`, o.vasp_did]));
      const index = entries.findIndex((e) => taken.has(`${e.asset}\u0000${e.address}\u0000${e.tag}`));
      const e = entries[index]!;
      throw new ConflictError(
        `${field}[${index}].vaspDID: ${e.asset} ${networkAddress(e)} is registered to ${taken.get(`${e.asset}\u0000${e.address}\u0000${e.tag}`)}; delete it there first`,
        { field: `${field}[${index}].vaspDID`, rule: 'an address belongs to one subsidiary', index },
      );
    }
    const inserted = rows.filter((r) => r.inserted).length;
    const updated = rows.filter((r) => !r.inserted && r.changed).length;
    const result = { inserted, updated, unchanged: rows.length - inserted - updated };
    if (by) await auditRegistryWrite(client, by, 'address-book.import', entries, result);
    return result;
  });
}

/**
 * Deletes entries by key; returns how many existed. Each deletion leaves a tombstone for the runs (trigger). With `by`,
 * audited in the same transaction.
 */
export async function deleteEntries(
  pool: Pool,
  keys: readonly { asset: string; address: string; tag: string }[],
  by?: Principal,
): Promise<{ deleted: number; notFound: number[] }> {
  if (keys.length === 0) return { deleted: 0, notFound: [] };
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ ord: string }>(
      `delete from address_registry r
        using unnest($1::text[], $2::text[], $3::text[]) with ordinality as t (asset, address, tag, ord)
        where r.asset = t.asset and r.address = t.address and r.tag = t.tag
       returning t.ord`,
      [keys.map((k) => k.asset), keys.map((k) => k.address), keys.map((k) => k.tag)],
    );
    const found = new Set(rows.map((r) => Number(r.ord) - 1));
    const result = { deleted: found.size, notFound: keys.map((_, i) => i).filter((i) => !found.has(i)) };
    if (by)
      await auditRegistryWrite(client, by, 'address-book.delete', keys, {
        deleted: result.deleted,
        notFound: result.notFound.length,
      });
    return result;
  });
}

/** The registry write's audit row: who, how many, for which VASPs; the addresses stay in the registry's own rows. */
async function auditRegistryWrite(
  tx: PoolClient,
  by: Principal,
  action: string,
  entries: readonly { asset: string; vaspDID?: string }[],
  counts: Record<string, number>,
): Promise<void> {
  const vaspDids = [...new Set(entries.flatMap((e) => (e.vaspDID ? [e.vaspDID] : [])))].sort();
  const assets = [...new Set(entries.map((e) => e.asset))].sort();
  await appendAuditEntry(tx, {
    actor: auditActor(by),
    action,
    subject: 'address-registry',
    details: { entries: entries.length, ...counts, ...(vaspDids.length ? { vaspDids } : {}), assets, principal: by },
  });
}

export interface ListFilter {
  vaspDID?: string;
  asset?: string;
  customerRef?: string;
  /** 1-based. */
  page: number;
  perPage: number;
}

/** One page of the registry in a stable order (VASP, network address, asset), with the filtered total. */
export async function listEntries(db: Db, f: ListFilter): Promise<{ total: number; items: StoredEntry[] }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.vaspDID) where.push(`vasp_did = $${params.push(f.vaspDID)}`);
  if (f.asset) where.push(`asset = $${params.push(f.asset)}`);
  if (f.customerRef) where.push(`customer_ref = $${params.push(f.customerRef)}`);
  const w = where.length ? `where ${where.join(' and ')}` : '';
  const [count, page] = await Promise.all([
    db.query<{ n: string }>(`select count(*) as n from address_registry ${w}`, params),
    db.query<{
      asset: string;
      address: string;
      tag: string;
      vasp_did: string;
      customer_ref: string;
      network_address: string;
      created_at: Date;
      updated_at: Date;
    }>(
      `select asset, address, tag, vasp_did, customer_ref, network_address, created_at, updated_at from address_registry ${w}
        order by vasp_did, network_address, asset limit ${f.perPage} offset ${(f.page - 1) * f.perPage}`,
      params,
    ),
  ]);
  return {
    total: Number(count.rows[0]!.n),
    items: page.rows.map((r) => ({
      asset: r.asset,
      address: r.address,
      tag: r.tag,
      vaspDID: r.vasp_did,
      customerRef: r.customer_ref,
      networkAddress: r.network_address,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    })),
  };
}
