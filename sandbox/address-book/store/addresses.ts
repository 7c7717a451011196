import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { badRequest } from '../../errors';
import { masterOf, normalizeAddress, normalizeAssetSymbol, type Entry } from '../rules';

type Db = Pick<Pool | PoolClient, 'query'>;

export type SourceType = 'INTERNAL' | 'EXTERNAL';

/**
 * The DID of a VASP's customer as the listing reports it (`customer_did`). The sandbox keeps no customer records of its
 * own, so the DID is derived from (VASP, customerRef): the same customer always gets the same DID, and two VASPs'
 * customers never share one. An entry without a customerRef has no customer DID.
 */
export function customerDidOf(vaspDid: string, customerRef: string): string | null {
  if (!customerRef) return null;
  return `did:ethr:0x${createHash('sha256').update(`${vaspDid}\n${customerRef}`).digest('hex').slice(0, 40)}`;
}

const keyOf = (asset: string, address: string) => `${asset}\u0000${address}`;

/**
 * Upserts one batch of normalised, de-duplicated entries for a VASP in a single multi-row statement. Rows already
 * written by the same run (`runId`) are left alone and reported as duplicates: that is how a CSV upload finds a row
 * repeated in a later batch of its own file. Returns the key (`asset\0address`) of each entry with what happened to it.
 */
export async function upsertBatch(
  db: Db,
  vaspDid: string,
  entries: readonly Entry[],
  runId: string,
): Promise<Map<string, 'registered' | 'updated' | 'duplicate'>> {
  const { rows } = await db.query<{ asset: string; address: string; inserted: boolean }>(
    `insert into addresses (vasp_did, asset, address, customer_ref, source_type, written_by)
     select $1, t.asset, t.address, t.customer_ref, 'INTERNAL', $5::uuid
       from unnest($2::text[], $3::text[], $4::text[]) as t (asset, address, customer_ref)
     on conflict (vasp_did, asset, address) do update
       set customer_ref = excluded.customer_ref, source_type = 'INTERNAL', written_by = excluded.written_by, updated_at = now()
       where addresses.written_by is distinct from excluded.written_by
     returning asset, address, (xmax = 0) as inserted`,
    [vaspDid, entries.map((e) => e.asset), entries.map((e) => e.address), entries.map((e) => e.customerRef), runId],
  );
  const out = new Map<string, 'registered' | 'updated' | 'duplicate'>(
    entries.map((e) => [keyOf(e.asset, e.address), 'duplicate']),
  );
  for (const r of rows) out.set(keyOf(r.asset, r.address), r.inserted ? 'registered' : 'updated');
  return out;
}

export { keyOf as entryKey };

/**
 * Registers one entry. Repeating the same registration changes nothing; a new customerRef replaces the old one.
 * The address and a symbol asset are normalised here too (idempotent), so callers elsewhere in the sandbox (e.g. a
 * confirmation registering a transfer's destination) store what lookups will search for. Throws on an address that
 * could never be registered through the API.
 */
export async function registerOne(
  db: Db,
  vaspDid: string,
  entry: Entry,
): Promise<'registered' | 'updated' | 'unchanged'> {
  const address = normalizeAddress(entry.address);
  if (!address.ok) throw badRequest('ValidationError', `address: ${address.rule}`);
  const symbol = entry.asset ? normalizeAssetSymbol(entry.asset) : undefined;
  const e = { ...entry, address: address.value, asset: symbol?.ok ? symbol.value : entry.asset };
  const { rows } = await db.query<{ inserted: boolean }>(
    `insert into addresses (vasp_did, asset, address, customer_ref, source_type) values ($1, $2, $3, $4, 'INTERNAL')
     on conflict (vasp_did, asset, address) do update
       set customer_ref = excluded.customer_ref, source_type = 'INTERNAL', written_by = null, updated_at = now()
       where addresses.customer_ref is distinct from excluded.customer_ref or addresses.source_type <> 'INTERNAL'
     returning (xmax = 0) as inserted`,
    [vaspDid, e.asset, e.address, e.customerRef],
  );
  if (!rows[0]) return 'unchanged';
  return rows[0].inserted ? 'registered' : 'updated';
}

export interface ListedAddress {
  address: string;
  owner_vasp_did: string;
  customer_did?: string;
  customer_ref: string;
}

/**
 * Where the pages of recent listings start, so that walking a big book page by page costs one short index range per
 * page (keyset) instead of skipping `page * per_page` entries each time. A start is remembered with the VASP's change
 * counter (address_counts.version, bumped by the triggers on every write to its book) and used only while the counter
 * is unchanged, so a page is always what OFFSET would give. Bounded: a few walks, each up to `maxPages` pages.
 */
export class PageStarts {
  private readonly walks = new Map<string, { version: string; starts: Map<number, [string, string]> }>();

  constructor(
    private readonly maxWalks = 32,
    private readonly maxPages = 20_000,
  ) {}

  get(walk: string, page: number): { version: string; after: [string, string] } | undefined {
    const w = this.walks.get(walk);
    const after = w?.starts.get(page);
    return w && after ? { version: w.version, after } : undefined;
  }

  set(walk: string, version: string, page: number, after: [string, string]): void {
    let w = this.walks.get(walk);
    if (!w || w.version !== version) w = { version, starts: new Map() };
    this.walks.delete(walk); // most recently used last
    this.walks.set(walk, w);
    if (w.starts.size < this.maxPages) w.starts.set(page, after);
    while (this.walks.size > this.maxWalks) this.walks.delete(this.walks.keys().next().value!);
  }
}

interface PageRow {
  total: string;
  version: string;
  asset: string | null;
  address: string | null;
  customer_ref: string | null;
}

/**
 * One page of a VASP's book in a stable order (asset, then address). The total, the change counter and the entries
 * come from one statement, hence one snapshot. Entries are read along the primary key, which carries customer_ref and
 * source_type (index-only scans): from a remembered start when the counter still matches, else by OFFSET.
 */
export async function listPage(
  db: Db,
  starts: PageStarts,
  vaspDid: string,
  sourceType: SourceType | undefined,
  page: number,
  perPage: number,
): Promise<{ total: number; data: ListedAddress[] }> {
  const walk = `${vaspDid}\u0000${sourceType ?? ''}\u0000${perPage}`;
  const filter = 'vasp_did = $1 and ($2::text is null or source_type = $2)';
  const read = (range: string, extra: unknown[]) =>
    db.query<PageRow>(
      `with c as (
         select coalesce(sum(n), 0)::bigint as total, coalesce(sum(version), 0)::bigint as version
           from address_counts where ${filter})
       select c.total, c.version, p.asset, p.address, p.customer_ref
         from c left join lateral (
           select asset, address, customer_ref from addresses where ${filter} ${range}
         ) p on true
        order by p.asset, p.address`,
      [vaspDid, sourceType ?? null, ...extra],
    );
  const remembered = page > 0 ? starts.get(walk, page) : undefined;
  let rows: PageRow[] | undefined;
  if (remembered) {
    const r = await read(
      `and c.version = $5::bigint and (asset, address) > ($3, $4) order by asset, address limit ${perPage}`,
      [...remembered.after, remembered.version],
    );
    // Another counter: the book changed since the start was remembered, and OFFSET decides after all.
    if (r.rows[0]!.version === remembered.version) rows = r.rows;
  }
  rows ??= (await read(`order by asset, address limit ${perPage} offset ${page * perPage}`, [])).rows;
  const head = rows[0]!;
  const entries = rows.filter(
    (r): r is PageRow & { asset: string; address: string; customer_ref: string } => r.address !== null,
  );
  const last = entries[entries.length - 1];
  if (last && entries.length === perPage) starts.set(walk, head.version, page + 1, [last.asset, last.address]);
  return {
    total: Number(head.total),
    data: entries.map((r) => {
      // The spec types customer_did as a string: an entry without a customer has none, left out rather than null.
      const customerDid = customerDidOf(vaspDid, r.customer_ref);
      return {
        address: r.address,
        owner_vasp_did: vaspDid,
        ...(customerDid && { customer_did: customerDid }),
        customer_ref: r.customer_ref,
      };
    }),
  };
}

/** Deletes the given addresses (under every asset) from a VASP's book; returns how many entries went. */
export async function deleteAddresses(db: Db, vaspDid: string, addresses: readonly string[]): Promise<number> {
  const { rowCount } = await db.query('delete from addresses where address = any($2::text[]) and vasp_did = $1', [
    vaspDid,
    addresses,
  ]);
  return rowCount ?? 0;
}

export interface AddressOwner {
  vaspDid: string;
  vaspName: string;
  /** The owner's gateway when it is a subsidiary. */
  parentDid: string | null;
  /** The entry's asset ('' when registered without one). */
  asset: string;
  /** The entry that matched: the address asked for, or its master address when only that is registered. */
  address: string;
  customerRef: string;
  match: 'exact' | 'master';
  createdAt: Date;
}

/**
 * The VASPs whose own (INTERNAL) address book holds `address` for `asset`, oldest registration first. An entry
 * registered without an asset matches every asset; an empty `asset` matches every entry. For a tagged address
 * (`<address>:<tag>`) that nobody registered, the owners of its master address are returned (match `master`): the
 * master is registered precisely so that transfers whose tag travels elsewhere still find the VASP.
 * Inputs are normalised like registrations, so checksum-cased EVM addresses and lower-case symbols match.
 */
export async function findOwners(db: Db, asset: string, address: string): Promise<AddressOwner[]> {
  const a = asset.trim() ? normalizeAssetSymbol(asset) : { ok: true as const, value: '' };
  const addr = normalizeAddress(address);
  if (!a.ok || !addr.ok) return [];
  const lookup = async (candidate: string, match: AddressOwner['match']) => {
    const { rows } = await db.query<{
      vasp_did: string;
      name: string;
      parent_did: string | null;
      asset: string;
      address: string;
      customer_ref: string;
      created_at: Date;
    }>(
      `select a.vasp_did, v.name, v.parent_did, a.asset, a.address, a.customer_ref, a.created_at
         from addresses a join vasps v on v.did = a.vasp_did
        where a.address = $1 and a.source_type = 'INTERNAL' and ($2 = '' or a.asset = $2 or a.asset = '')
        order by a.created_at, a.vasp_did, a.asset`,
      [candidate, a.value],
    );
    return rows.map((r) => ({
      vaspDid: r.vasp_did,
      vaspName: r.name,
      parentDid: r.parent_did,
      asset: r.asset,
      address: r.address,
      customerRef: r.customer_ref,
      match,
      createdAt: r.created_at,
    }));
  };
  const exact = await lookup(addr.value, 'exact');
  if (exact.length) return exact;
  const master = masterOf(addr.value);
  return master ? lookup(master, 'master') : [];
}

/**
 * The one owner an ownership lookup reports, following what the network does when it resolves a beneficiary VASP
 * from an address: one owner → it; several owners all under the same gateway → the first
 * subsidiary; otherwise a conflict, reported as not found.
 */
export function pickOwner(owners: readonly AddressOwner[]): AddressOwner | undefined {
  const vasps = [...new Map(owners.map((o) => [o.vaspDid, o])).values()];
  if (vasps.length === 1) return vasps[0];
  const parent = vasps[0]?.parentDid;
  if (parent && vasps.every((o) => o.parentDid === parent)) return vasps[0];
  return undefined;
}
