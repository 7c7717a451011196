/**
 * The sanctions lists (sanctions_lists, sanctions_names, risk_addresses): replaced whole by a load, and searched by name
 * similarity and by address when an incoming transfer is screened.
 */
import type { Pool, PoolClient } from 'pg';
import { ValidationError } from '../lib/errors';
import { auditActor, type Principal } from '../lib/principal';
import { appendAuditEntry } from '../audit/store';
import { normalizeName } from './normalize';
import { networkAsset, type SdnAlias, type SdnEntry } from './sdn-csv';

export interface LoadResult {
  list: string;
  entries: number;
  aliases: number;
  addresses: number;
}

export interface NameHit {
  list: string;
  entNum: number;
  matchedName: string;
  score: number;
  programs: string[];
}

export interface AddressHit {
  list: string;
  asset: string;
  address: string;
  entNum: number | null;
  category: string;
}

const BATCH = 1000;

async function insertNames(client: PoolClient, rows: unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const cols = 7;
  const values = rows
    .map((_, i) => `(${Array.from({ length: cols }, (_, j) => `$${i * cols + j + 1}`).join(',')})`)
    .join(',');
  await client.query(
    `insert into sanctions_names (list, ent_num, name, normalized, kind, entry_type, programs) values ${values}`,
    rows.flat(),
  );
}

/**
 * Replaces a sanctions list with the entries (and aliases) given, streaming, in one transaction: screening never sees
 * half a list, and a source that throws midway (a malformed row) changes nothing. The load is audited, as
 * `screening.list.load` by `opts.by`, in the same transaction.
 */
export async function replaceSanctionsList(
  pool: Pool,
  opts: { list: string; source: string; by: Principal },
  entries: AsyncIterable<SdnEntry>,
  aliases?: AsyncIterable<SdnAlias & { line: number }>,
): Promise<LoadResult> {
  const client = await pool.connect();
  const result: LoadResult = { list: opts.list, entries: 0, aliases: 0, addresses: 0 };
  try {
    await client.query('begin');
    await client.query('delete from sanctions_lists where name = $1', [opts.list]);
    await client.query('delete from risk_addresses where list = $1', [opts.list]);
    await client.query(
      `insert into sanctions_lists (name, source, entries, aliases, addresses) values ($1, $2, 0, 0, 0)`,
      [opts.list, opts.source],
    );
    const entryTypes = new Map<number, { type: string; programs: string[] }>();
    let batch: unknown[][] = [];
    for await (const entry of entries) {
      entryTypes.set(entry.entNum, { type: entry.type, programs: entry.programs });
      batch.push([
        opts.list,
        entry.entNum,
        entry.name,
        normalizeName(entry.name),
        'primary',
        entry.type,
        entry.programs,
      ]);
      for (const a of entry.addresses) {
        await client.query(
          `insert into risk_addresses (list, asset, address, ent_num, category) values ($1, $2, $3, $4, 'sanctioned')
           on conflict do nothing`,
          [opts.list, networkAsset(a.asset), a.address, entry.entNum],
        );
        result.addresses += 1;
      }
      result.entries += 1;
      if (batch.length >= BATCH) {
        await insertNames(client, batch);
        batch = [];
      }
    }
    if (aliases) {
      for await (const alias of aliases) {
        const line = alias.line;
        const entry = entryTypes.get(alias.entNum);
        if (!entry)
          throw new ValidationError('altFile', `line ${line}: ent_num ${alias.entNum} is not in the SDN file`);
        batch.push([
          opts.list,
          alias.entNum,
          alias.name,
          normalizeName(alias.name),
          alias.type,
          entry.type,
          entry.programs,
        ]);
        result.aliases += 1;
        if (batch.length >= BATCH) {
          await insertNames(client, batch);
          batch = [];
        }
      }
    }
    await insertNames(client, batch);
    if (result.entries === 0) throw new ValidationError('sdnFile', 'holds no entry');
    await client.query('update sanctions_lists set entries = $2, aliases = $3, addresses = $4 where name = $1', [
      opts.list,
      result.entries,
      result.aliases,
      result.addresses,
    ]);
    await appendAuditEntry(client, {
      actor: auditActor(opts.by),
      action: 'screening.list.load',
      subject: opts.list,
      details: { ...result, source: opts.source, principal: opts.by },
    });
    await client.query('commit');
    return result;
  } catch (e) {
    await client.query('rollback');
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Names on any loaded list whose similarity to `name` reaches `threshold` (0..1), best first. The score is the
 * trigram similarity of the normalised names, or, for a name of two or more words, how well it matches a run of the
 * listed name's words (so "Ivan Petrov" finds "PETROV, Ivan Sergeyevich"), slightly discounted.
 */
export async function screenName(pool: Pool, name: string, threshold: number): Promise<NameHit[]> {
  const normalized = normalizeName(name);
  if (!normalized) return [];
  const multiword = normalized.includes(' ');
  const { rows } = await pool.query<{ list: string; ent_num: number; name: string; score: number; programs: string[] }>(
    `select distinct on (list, ent_num) list, ent_num, name, programs, score from (
       select list, ent_num, name, programs,
              greatest(similarity(normalized, $1), case when $2 then word_similarity($1, normalized) * 0.95 else 0 end) as score
         from sanctions_names
        where normalized % $1 or ($2 and $1 <% normalized)
     ) candidates
     where score >= $3
     order by list, ent_num, score desc`,
    [normalized, multiword, threshold],
  );
  return rows
    .map((r) => ({
      list: r.list,
      entNum: r.ent_num,
      matchedName: r.name,
      score: Math.round(r.score * 1000) / 1000,
      programs: r.programs,
    }))
    .sort((a, b) => b.score - a.score);
}

/**
 * Listed addresses equal to `address` (case-insensitive, as EVM addresses are; a `:tag` suffix is ignored). The asset
 * is not part of the match: a sanctioned address is a hit whatever token the transfer carries.
 */
export async function screenAddress(pool: Pool, address: string): Promise<AddressHit[]> {
  const bare = address.split(':')[0]!;
  const { rows } = await pool.query<{
    list: string;
    asset: string;
    address: string;
    ent_num: number | null;
    category: string;
  }>(
    'select list, asset, address, ent_num, category from risk_addresses where lower(address) = lower($1) order by list, asset',
    [bare],
  );
  return rows.map((r) => ({
    list: r.list,
    asset: r.asset,
    address: r.address,
    entNum: r.ent_num,
    category: r.category,
  }));
}

export async function loadedLists(pool: Pool): Promise<{ name: string; entries: number; loadedAt: string }[]> {
  const { rows } = await pool.query<{ name: string; entries: number; loaded_at: Date }>(
    'select name, entries, loaded_at from sanctions_lists order by name',
  );
  return rows.map((r) => ({ name: r.name, entries: r.entries, loadedAt: r.loaded_at.toISOString() }));
}
