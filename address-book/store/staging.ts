/**
 * A reconciliation run's staging: its partitions of address_book_listing (what the network listed, before and after),
 * address_book_delta (what to add and remove) and address_book_mirror (what the network holds once it is done), each
 * named after the run. A run id therefore reaches SQL identifiers and partition bounds, where no parameter can stand:
 * only a UUID is let through (a ValidationError otherwise), and both are quoted with the driver's helpers.
 */
import { escapeIdentifier, escapeLiteral, type Pool, type PoolClient } from 'pg';
import { ValidationError } from '../../lib/errors';

type Db = Pick<Pool | PoolClient, 'query'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Refuses anything but a (lower-case) UUID as a run id, naming the field. */
export function assertRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || !UUID.test(runId)) throw new ValidationError('runId', 'must be a UUID');
}

export type StagingTable = 'address_book_listing' | 'address_book_delta' | 'address_book_mirror';

/** The unquoted name of a run's partition (for to_regclass). */
export function partitionName(table: StagingTable, runId: string, suffix: '' | '_head' | '_rest' = ''): string {
  assertRunId(runId);
  return `${table}_${runId.replace(/-/g, '')}${suffix}`;
}

/** A run's partition of a staging table, quoted for use in a statement. */
export const partition = (table: StagingTable, runId: string, suffix: '' | '_head' | '_rest' = '') =>
  escapeIdentifier(partitionName(table, runId, suffix));

/** The run id as a quoted literal, for partition bounds and check constraints. */
export function runIdLiteral(runId: string): string {
  assertRunId(runId);
  return escapeLiteral(runId);
}

export type ListingKind = 'before' | 'after';

export async function createListingPartition(db: Db, runId: string): Promise<void> {
  await db.query(
    `create unlogged table if not exists ${partition('address_book_listing', runId)} partition of address_book_listing
       for values in (${runIdLiteral(runId)})`,
  );
}

/**
 * One page of the network's listing into the run's staging (addresses with how often they were listed) and the run's
 * listing progress, in the caller's transaction.
 */
export async function recordListingPage(
  c: PoolClient,
  runId: string,
  kind: ListingKind,
  page: { next: number; done: boolean; total: number; counts: Map<string, { ref: string; n: number }> },
): Promise<void> {
  const listing = partition('address_book_listing', runId);
  if (page.counts.size > 0) {
    await c.query(
      `insert into ${listing} (run_id, kind, address, customer_ref, n)
       select $1, $2, a, r, n from unnest($3::text[], $4::text[], $5::int[]) as t (a, r, n)
       on conflict (run_id, kind, address) do update set n = ${listing}.n + excluded.n`,
      [
        runId,
        kind,
        [...page.counts.keys()],
        [...page.counts.values()].map((v) => v.ref),
        [...page.counts.values()].map((v) => v.n),
      ],
    );
  }
  const [pagesCol, doneCol, totalCol] =
    kind === 'before'
      ? ['listed_pages', 'listing_done', 'network_before']
      : ['verify_pages', 'verify_done', 'network_after'];
  await c.query(
    `update address_book_runs set ${pagesCol} = $2, ${doneCol} = $3, ${totalCol} = $4, phase = $5 where run_id = $1`,
    [runId, page.next, page.done, page.total, kind === 'before' ? 'listing' : 'verifying'],
  );
}

/** Listing rows staged (each address counted as often as listed) and distinct addresses among them. */
export async function listingCounts(
  db: Db,
  runId: string,
  kind: ListingKind,
): Promise<{ rows: number; distinct: number }> {
  const { rows } = await db.query<{ rows: string; distinct: string }>(
    `select coalesce(sum(n), 0) as rows, count(*) as distinct from ${partition('address_book_listing', runId)} where kind = $1`,
    [kind],
  );
  return { rows: Number(rows[0]!.rows), distinct: Number(rows[0]!.distinct) };
}

/** Whether anything of `kind` was listed. */
export async function hasListing(db: Db, runId: string, kind: ListingKind): Promise<boolean> {
  const { rowCount } = await db.query(
    `select 1 from ${partition('address_book_listing', runId)} where kind = $1 limit 1`,
    [kind],
  );
  return (rowCount ?? 0) > 0;
}

/** The counts of a computed delta that its run row does not hold. */
export async function deltaCounts(
  db: Db,
  runId: string,
): Promise<{ chunks: number; removeRows: number; networkBeforeDistinct: number }> {
  const listing = partition('address_book_listing', runId);
  const { rows } = await db.query<{ chunks: string; remove_rows: string; distinct: string }>(
    `select (select count(*) from address_book_chunks where run_id = $1) as chunks,
            (select coalesce(sum(l.n), 0) from ${partition('address_book_delta', runId)} d
               join ${listing} l on l.kind = 'before' and l.address = d.address
              where d.action = 'remove') as remove_rows,
            (select count(*) from ${listing} where kind = 'before') as distinct`,
    [runId],
  );
  return {
    chunks: Number(rows[0]!.chunks),
    removeRows: Number(rows[0]!.remove_rows),
    networkBeforeDistinct: Number(rows[0]!.distinct),
  };
}

/** The next removals of the delta after `seq`, in order. */
export async function removalsAfter(
  db: Db,
  runId: string,
  seq: number,
  limit: number,
): Promise<{ seq: string; address: string }[]> {
  const { rows } = await db.query<{ seq: string; address: string }>(
    `select seq, address from ${partition('address_book_delta', runId)} where action = 'remove' and seq > $1 order by seq limit $2`,
    [seq, limit],
  );
  return rows;
}

/** The next additions of the delta after `seq`, in order. */
export async function additionsAfter(
  db: Db,
  runId: string,
  seq: number,
  limit: number,
): Promise<{ seq: string; address: string; asset: string; customer_ref: string }[]> {
  const { rows } = await db.query<{ seq: string; address: string; asset: string; customer_ref: string }>(
    `select seq, address, asset, customer_ref from ${partition('address_book_delta', runId)} where action = 'add' and seq > $1 order by seq limit $2`,
    [seq, limit],
  );
  return rows;
}

/** Additions in seq order as arrays [asset, address, customerRef], for the CSV (keyset on seq, up to `lastSeq`). */
export async function additionRows(
  db: Db,
  runId: string,
  after: number,
  lastSeq: number,
  limit: number,
): Promise<[string, string, string][]> {
  const { rows } = await db.query<[string, string, string]>({
    text: `select asset, address, customer_ref from ${partition('address_book_delta', runId)}
            where run_id = $1 and action = 'add' and seq > $2 and seq <= $3 order by seq limit ${Number(limit)}`,
    values: [runId, after, lastSeq],
    rowMode: 'array',
  });
  return rows;
}

/** New addresses (not updates) among the additions up to `seq`: what the network's count grows by once they arrive. */
export async function newAdditionsThrough(db: Db, runId: string, seq: string | number): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `select count(*) as n from ${partition('address_book_delta', runId)} where action = 'add' and not is_update and seq <= $1`,
    [seq],
  );
  return Number(rows[0]!.n);
}

/** New addresses the network refused (over every attempt): the count will not include them. */
export async function refusedNewAdditions(db: Db, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `select count(*) as n from address_book_rejections r
       join ${partition('address_book_delta', runId)} d on d.action = 'add' and d.address = r.address and not d.is_update
      where r.run_id = $1 and r.action = 'add'`,
    [runId],
  );
  return Number(rows[0]!.n);
}

/** Listing rows the refused deletions leave in place (over every attempt). */
export async function refusedRemovalRows(db: Db, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `select coalesce(sum(l.n), 0) as n from address_book_rejections r
       join ${partition('address_book_listing', runId)} l on l.kind = 'before' and l.address = r.address
      where r.run_id = $1 and r.action = 'remove'`,
    [runId],
  );
  return Number(rows[0]!.n);
}

/**
 * What the listing after processing contradicts in the delta, leaving out rows already rejected (they keep their first
 * reason): additions missing (or listed with another customerRef) and removals still listed.
 */
export async function unconfirmedChanges(
  c: PoolClient,
  runId: string,
): Promise<{
  missing: { address: string; asset: string; customer_ref: string; listed_ref: string | null }[];
  stillListed: { address: string }[];
}> {
  const delta = partition('address_book_delta', runId);
  const listing = partition('address_book_listing', runId);
  const { rows: missing } = await c.query<{
    address: string;
    asset: string;
    customer_ref: string;
    listed_ref: string | null;
  }>(
    `select d.address, d.asset, d.customer_ref, l.customer_ref as listed_ref
       from ${delta} d left join ${listing} l on l.kind = 'after' and l.address = d.address
      where d.action = 'add' and (l.address is null or l.customer_ref is distinct from d.customer_ref)
        and not exists (select 1 from address_book_rejections x where x.run_id = $1 and x.address = d.address)`,
    [runId],
  );
  const { rows: stillListed } = await c.query<{ address: string }>(
    `select d.address from ${delta} d join ${listing} l on l.kind = 'after' and l.address = d.address
      where d.action = 'remove'
        and not exists (select 1 from address_book_rejections x where x.run_id = $1 and x.address = d.address)`,
    [runId],
  );
  return { missing, stillListed };
}

/**
 * How much of the run's delta was sent to the network: removals up to the removal checkpoint, additions registered up
 * to the registration checkpoint or in an uploaded chunk (rows the network refused count as sent). Zero when the run
 * ended before its delta existed.
 */
export async function sentChanges(db: Db, runId: string): Promise<{ removals: number; additions: number }> {
  const { rows: exists } = await db.query<{ t: string | null }>('select to_regclass($1) as t', [
    partitionName('address_book_delta', runId),
  ]);
  if (!exists[0]?.t) return { removals: 0, additions: 0 };
  const { rows } = await db.query<{ removals: string; additions: string }>(
    `select count(*) filter (where d.action = 'remove' and d.seq <= r.removed_through) as removals,
            count(*) filter (where d.action = 'add' and (d.seq <= r.registered_through or exists (
              select 1 from address_book_chunks c
               where c.run_id = r.run_id and c.state = 'uploaded' and d.seq between c.first_seq and c.last_seq))) as additions
       from ${partition('address_book_delta', runId)} d, address_book_runs r
      where r.run_id = $1`,
    [runId],
  );
  return { removals: Number(rows[0]!.removals), additions: Number(rows[0]!.additions) };
}

/** Drops the run's listing and delta partitions (its mirror stays, when kept). */
export async function dropStaging(db: Db, runId: string): Promise<void> {
  for (const table of ['address_book_listing', 'address_book_delta'] as const) {
    await db.query(`drop table if exists ${partition(table, runId)}`);
  }
}
