/**
 * The personal-data service's store.
 *
 * - An item is the JSON string `{"key": <flattened IVMS101 path>, "value": <encrypted value>}` — exactly what `/get`
 *   answers as `data` — and its identifier is the CIDv1 of those bytes: raw codec (0x55), sha2-256, base32 (`bafkrei…`).
 *   Anyone can recompute it from the data, and the same data always has the same CID.
 * - Owners: every put records (fromDID, toDID) for each item. Only callers acting for one of an item's owner VASPs (a
 *   gateway user acts for its subsidiaries) may read it. Knowing a CID grants nothing: a CID the caller may not read is
 *   answered exactly like one that does not exist — it is simply absent from the `/get` answer — so the store never
 *   confirms that someone else's data exists.
 */
import type { Pool, PoolClient } from 'pg';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';

type Db = Pick<Pool | PoolClient, 'query'>;

export interface PiiEntry {
  key: string;
  value: string;
}

export interface StoredItem {
  cid: string;
  /** JSON string `{"key","value"}`. */
  data: string;
}

/** The item's bytes as stored and hashed. */
export const itemData = (entry: PiiEntry): string => JSON.stringify({ key: entry.key, value: entry.value });

export async function cidOf(data: string): Promise<string> {
  const digest = await sha256.digest(new TextEncoder().encode(data));
  return CID.create(1, raw.code, digest).toString();
}

/** Stores the entries for the pair (fromDID, toDID) and answers `[{key, value: CID}]` in the order given. */
export async function putEntries(
  db: Db,
  fromDid: string,
  toDid: string,
  entries: readonly PiiEntry[],
): Promise<PiiEntry[]> {
  if (entries.length === 0) return [];
  const items = await Promise.all(
    entries.map(async (e) => {
      const data = itemData(e);
      return { key: e.key, data, cid: await cidOf(data) };
    }),
  );
  const unique = [...new Map(items.map((i) => [i.cid, i])).values()];
  await db.query(
    `insert into pii_items (cid, data) select * from unnest($1::text[], $2::text[]) on conflict (cid) do nothing`,
    [unique.map((i) => i.cid), unique.map((i) => i.data)],
  );
  await db.query(
    `insert into pii_owners (cid, from_did, to_did) select c, $2, $3 from unnest($1::text[]) as c
     on conflict do nothing`,
    [unique.map((i) => i.cid), fromDid, toDid],
  );
  return items.map((i) => ({ key: i.key, value: i.cid }));
}

/**
 * The items among `cids` that one of `readerVasps` owns (as fromDID or toDID), in the order asked, each once.
 * `readerVasps` undefined means the service itself (hosted mode, operator): every existing item.
 */
export async function getItems(
  db: Db,
  cids: readonly string[],
  readerVasps: readonly string[] | undefined,
): Promise<StoredItem[]> {
  if (cids.length === 0) return [];
  const { rows } = await db.query<StoredItem>(
    readerVasps === undefined
      ? 'select cid, data from pii_items where cid = any($1)'
      : `select i.cid, i.data from pii_items i
          where i.cid = any($1)
            and exists (select 1 from pii_owners o where o.cid = i.cid and (o.from_did = any($2) or o.to_did = any($2)))`,
    readerVasps === undefined ? [cids] : [cids, readerVasps],
  );
  const byCid = new Map(rows.map((r) => [r.cid, r]));
  const seen = new Set<string>();
  const out: StoredItem[] = [];
  for (const cid of cids) {
    const item = byCid.get(cid);
    if (item && !seen.has(cid)) {
      seen.add(cid);
      out.push(item);
    }
  }
  return out;
}

/** Adds an owner pair to items that already exist (the beneficiary of a transaction becomes known later). */
export async function addOwners(db: Db, cids: readonly string[], fromDid: string, toDid: string): Promise<void> {
  if (cids.length === 0) return;
  await db.query(
    `insert into pii_owners (cid, from_did, to_did) select cid, $2, $3 from pii_items where cid = any($1) on conflict do nothing`,
    [cids, fromDid, toDid],
  );
}

/** Parses an item's `data` back into its entry; undefined when it is not the stored shape. */
export function parseItem(data: string): PiiEntry | undefined {
  try {
    const v = JSON.parse(data) as unknown;
    if (
      typeof v === 'object' &&
      v !== null &&
      typeof (v as PiiEntry).key === 'string' &&
      typeof (v as PiiEntry).value === 'string'
    ) {
      return { key: (v as PiiEntry).key, value: (v as PiiEntry).value };
    }
  } catch {
    /* not JSON */
  }
  return undefined;
}

/** Every string leaf of a `pii` tree (CIDs or encrypted strings), with its flattened path. */
export function piiLeaves(tree: unknown, path = ''): PiiEntry[] {
  if (typeof tree === 'string') return path ? [{ key: path, value: tree }] : [];
  if (Array.isArray(tree)) return tree.flatMap((c, i) => piiLeaves(c, `${path}[${i}]`));
  if (typeof tree === 'object' && tree !== null) {
    return Object.entries(tree).flatMap(([k, c]) => piiLeaves(c, path ? `${path}.${k}` : k));
  }
  return [];
}

const CID_RE = /^b[a-z2-7]{20,}$/;
/** Whether a `pii` leaf looks like a CID of this store (base32 CIDv1) rather than an inline encrypted value. */
export const looksLikeCid = (value: string): boolean => CID_RE.test(value);
