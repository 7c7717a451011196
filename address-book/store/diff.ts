/**
 * The SQL of a reconciliation run's diff: the desired set (from the group's registry) against what the network listed,
 * written as the run's delta partition (additions and removals, numbered), and the additions cut into upload chunks.
 * The orchestration of these steps (whole diff, or a first sync's head and rest) is address-book/diff.ts.
 */
import type { Pool, PoolClient } from 'pg';
import { CSV_HEADER_BYTES } from '../csv';
import { ValidationError } from '../../lib/errors';
import { REGISTRY_LOCK } from './registry';
import { partition, partitionName, runIdLiteral } from './staging';

/** Memory for the diff's sorts: a million-row desired set sorts in memory instead of in temporary files. */
const DIFF_WORK_MEM = '256MB';

/**
 * The size of one row in the CSV the upload writes (address-book/upload.ts), computed in SQL when the delta is made
 * so chunks can be cut to a byte budget before anything is read: fields are joined by commas and end with a newline; a
 * field is quoted (and its quotes doubled) only when it holds a comma or a quote. The entry rules keep those out of
 * assets and addresses and keep line breaks out of everything, so only customerRef can need quoting.
 */
const ROW_BYTES_SQL = `(octet_length(d.asset) + octet_length(d.address) + 3 +
  case when d.customer_ref ~ '[,"]' then octet_length(replace(d.customer_ref, '"', '""')) + 2 else octet_length(d.customer_ref) end)`;

export interface DeltaCounts {
  desired: string;
  to_add: string;
  to_update: string;
  to_remove: string;
}

/** What cutting chunks needs of the settings. */
export interface ChunkLimits {
  chunkRows: number;
  chunkMaxBytes: number;
}

/**
 * The desired set, sorted by network address: each entry's network address, plus the master address of every tagged
 * entry (see address-book/diff.ts); `$2` is the VASP. `only` and `onlyMaster` narrow the two sides (same address space).
 */
const desiredSql = (
  only: string,
  onlyMaster: string,
) => `select distinct on (na) na as address, asset, customer_ref from (
      select network_address collate "C" as na, asset, customer_ref, 0 as pri from address_registry where vasp_did = $2 ${only}
      union all
      select address collate "C", asset, customer_ref, 1 from address_registry where vasp_did = $2 and tag <> '' ${onlyMaster}
    ) x order by na, pri, asset, customer_ref`;

export async function useDiffMemory(c: PoolClient): Promise<void> {
  await c.query(`set local work_mem = '${DIFF_WORK_MEM}'`);
}

/**
 * Runs `work` in a diff's transaction, committed when it returns: the registry's high-water mark, and a snapshot that
 * holds exactly the writes up to it. Writers hold REGISTRY_LOCK shared for their whole transaction, so with it taken
 * exclusively none is in flight when the snapshot is taken; it is released at once, and later writes get higher
 * change_seq values.
 */
export async function inSnapshot<T>(pool: Pool, work: (c: PoolClient, watermark: number) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('select pg_advisory_lock($1)', [REGISTRY_LOCK]);
    await c.query('begin isolation level repeatable read');
    const { rows: mark } = await c.query<{ last_value: string }>('select last_value from address_registry_change_seq');
    await c.query('select pg_advisory_unlock($1)', [REGISTRY_LOCK]);
    const result = await work(c, Number(mark[0]!.last_value));
    await c.query('commit');
    return result;
  } catch (e) {
    await c.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    await c.query('select pg_advisory_unlock_all()').catch(() => undefined);
    c.release();
  }
}

/**
 * The run's delta is written into a table of its own, without its primary key, and attached as the run's partition
 * once complete (attachDeltaTable): a million rows inserted through an index cost several times the index built over
 * them afterwards. The check constraint lets the attachment skip its validation scan.
 */
export async function createDeltaTable(
  c: PoolClient,
  runId: string,
  suffix: '' | '_head' | '_rest' = '',
): Promise<void> {
  await c.query(
    `create unlogged table ${partition('address_book_delta', runId, suffix)}
       (like address_book_delta including defaults including constraints, check (run_id = ${runIdLiteral(runId)}))`,
  );
}

export async function attachDeltaTable(c: PoolClient, runId: string): Promise<void> {
  const delta = partition('address_book_delta', runId);
  await c.query(`alter table ${delta} add primary key (run_id, action, seq)`);
  await c.query(`alter table address_book_delta attach partition ${delta} for values in (${runIdLiteral(runId)})`);
}

/** An older run's begin step created the delta partition empty; the diff now creates it itself (createDeltaTable). */
export async function dropDeltaTable(db: Pick<Pool | PoolClient, 'query'>, runId: string): Promise<void> {
  await db.query(`drop table if exists ${partition('address_book_delta', runId)}`);
}

/** A fresh partition has no statistics: without them the diff's joins are planned blind. */
export async function analyzeListing(c: PoolClient, runId: string): Promise<void> {
  await c.query(`analyze ${partition('address_book_listing', runId)}`);
}

/**
 * Writes the delta rows; returns the counts. Network addresses are compared and ordered with COLLATE "C": the same
 * order as the database's C.UTF-8 (code points), without the locale library's comparisons. With `affectedOnly`, both
 * sides are narrowed to the addresses of the `affected` table (an incremental run, stageAffectedFromMirror).
 */
export async function writeDelta(
  c: PoolClient,
  q: { runId: string; vaspDid: string; affectedOnly: boolean },
): Promise<DeltaCounts> {
  const only = q.affectedOnly ? 'and network_address in (select address from affected)' : '';
  const onlyMaster = q.affectedOnly ? 'and address in (select address from affected)' : '';
  const desired = desiredSql(only, onlyMaster);
  const listing = partition('address_book_listing', q.runId);
  const delta = partition('address_book_delta', q.runId);
  const listed = await c.query(`select 1 from ${listing} where kind = 'before' limit 1`);
  if (!listed.rowCount) {
    // Nothing listed (a first sync): every desired row is an addition, numbered in the order the desired set is
    // already sorted in, so the rows are sorted once.
    const ins = await c.query(
      `insert into ${delta} (run_id, action, seq, address, asset, customer_ref, bytes)
       select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${ROW_BYTES_SQL} from (${desired}) d`,
      [q.runId, q.vaspDid],
    );
    const n = String(ins.rowCount ?? 0);
    return { desired: n, to_add: n, to_update: '0', to_remove: '0' };
  }
  const { rows } = await c.query<DeltaCounts>(
    `with desired as materialized (${desired}),
     listed as (
       select address collate "C" as address, customer_ref from ${listing} where kind = 'before'
     ), adds as (
       insert into ${delta} (run_id, action, seq, address, asset, customer_ref, is_update, bytes)
       select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, l.address is not null, ${ROW_BYTES_SQL}
         from desired d left join listed l on l.address = d.address
        where l.address is null or l.customer_ref is distinct from d.customer_ref
       returning is_update
     ), removes as (
       insert into ${delta} (run_id, action, seq, address)
       select $1, 'remove', row_number() over (order by l.address), l.address
         from listed l where not exists (select 1 from desired d where d.address = l.address)
       returning 1
     )
     select (select count(*) from desired) as desired,
            (select count(*) from adds where not is_update) as to_add,
            (select count(*) from adds where is_update) as to_update,
            (select count(*) from removes) as to_remove`,
    [q.runId, q.vaspDid],
  );
  return rows[0]!;
}

/**
 * Cuts the additions of the run's delta table (or its head or rest) into chunks by bytes (bp) and by rows (rp); both
 * grow with seq, so every (bp, rp) group is a contiguous range of at most chunkRows rows and at most budget + one row's
 * bytes. When all the additions fit the budget (bp is 0 throughout), the chunks are the row ranges and no running sum
 * is needed.
 */
export async function planChunks(
  c: PoolClient,
  runId: string,
  suffix: '' | '_head' | '_rest',
  s: ChunkLimits,
  after = { seq: 0, chunkNo: 0 },
): Promise<void> {
  const delta = partition('address_book_delta', runId, suffix);
  const { rows: t } = await c.query<{ max: number; sum: string }>(
    `select max(bytes) as max, sum(bytes) as sum from ${delta} where action = 'add'`,
  );
  const budget = s.chunkMaxBytes - CSV_HEADER_BYTES - t[0]!.max;
  if (budget <= 0) {
    throw new ValidationError(
      'ADDRESS_BOOK_CHUNK_MAX_BYTES',
      `${s.chunkMaxBytes} bytes cannot hold the header and a row of ${t[0]!.max} bytes`,
    );
  }
  // budget is a whole number computed from the settings, written into the statement.
  const bp =
    Number(t[0]!.sum) <= budget
      ? '0'
      : `(sum(bytes) over (order by seq rows unbounded preceding) - bytes) / ${Number(budget)}`;
  await c.query(
    `insert into address_book_chunks (run_id, chunk_no, first_seq, last_seq, rows, bytes)
     select $1, $5 + row_number() over (order by bp, rp), min(seq), max(seq), count(*), sum(bytes) + $3
       from (select seq, bytes, ${bp} as bp, (seq - $4 - 1) / $2 as rp from ${delta} where action = 'add') x
      group by bp, rp`,
    [runId, s.chunkRows, CSV_HEADER_BYTES, after.seq, after.chunkNo],
  );
}

/** The whole delta's outcome on the run row: the counts, how the additions go, the registry watermark it reflects. */
export async function recordDelta(
  c: PoolClient,
  runId: string,
  d: {
    desired: number | string;
    toAdd: string;
    toUpdate: string;
    toRemove: string;
    method: 'none' | 'register' | 'upload';
    watermark: number;
  },
): Promise<void> {
  await c.query(
    `update address_book_runs set delta_ready = true, desired = $2, to_add = $3, to_update = $4, to_remove = $5, method = $6,
            watermark = $7
      where run_id = $1`,
    [runId, d.desired, d.toAdd, d.toUpdate, d.toRemove, d.method, d.watermark],
  );
}

/** Distinct addresses of the VASP's last verified result (its mirror). */
export async function mirroredAddresses(c: PoolClient, vaspDid: string): Promise<number> {
  const { rows } = await c.query<{ n: string }>(
    'select distinct_rows as n from address_book_state where vasp_did = $1',
    [vaspDid],
  );
  return Number(rows[0]!.n);
}

/**
 * An incremental run's starting point: the mirror of the last verified result, for the network addresses the registry
 * changed between `previous` (the last run's watermark) and `watermark` (an entry's own address and, for a tagged
 * entry, its master, whether the entry changed or went) and those the network refused in the last run, staged as the
 * run's listing, with the addresses in a temporary `affected` table that writeDelta narrows to. The run is recorded
 * as listed, with the mirror's count as the network's.
 */
export async function stageAffectedFromMirror(
  c: PoolClient,
  runId: string,
  vaspDid: string,
  watermark: number,
): Promise<void> {
  const listing = partition('address_book_listing', runId);
  const { rows: st } = await c.query<{
    watermark: string;
    network_rows: string;
    run_id: string;
    mirror_run_id: string;
  }>('select watermark, network_rows, run_id, mirror_run_id from address_book_state where vasp_did = $1', [vaspDid]);
  if (!st[0]) throw new ValidationError('mode', 'incremental run without a verified earlier result');
  const previous = Number(st[0].watermark);
  await c.query(`delete from ${listing}`);
  await c.query(
    `create temporary table affected on commit drop as
     select distinct a as address from (
       select network_address as a from address_registry where vasp_did = $1 and change_seq > $2 and change_seq <= $3
       union all
       select address from address_registry where vasp_did = $1 and change_seq > $2 and change_seq <= $3 and tag <> ''
       union all
       select case when tag = '' then address else address || ':' || tag end
         from address_registry_removed where vasp_did = $1 and change_seq > $2 and change_seq <= $3
       union all
       select address from address_registry_removed where vasp_did = $1 and change_seq > $2 and change_seq <= $3 and tag <> ''
       union all
       -- What the network refused last time is tried again.
       select address from address_book_rejections where run_id = $4
     ) x`,
    [vaspDid, previous, watermark, st[0].run_id],
  );
  await c.query('alter table affected add primary key (address)');
  await c.query(
    `insert into ${listing} (run_id, kind, address, customer_ref, n)
     select $1, 'before', m.address, m.customer_ref, m.n from address_book_mirror m join affected a using (address)
      where m.run_id = $2`,
    [runId, st[0].mirror_run_id],
  );
  await c.query(
    `update address_book_runs set listing_done = true, network_before = $2, listed_pages = 0 where run_id = $1`,
    [runId, st[0].network_rows],
  );
}

/**
 * A first sync's head, once committed: rows 1..H of the delta in a sub-partition of their own, their last address and
 * chunks (see address-book/diff.ts). Read from the table, so a retry returns what the first attempt committed.
 */
export async function committedHead(
  db: Pick<Pool | PoolClient, 'query'>,
  runId: string,
): Promise<{ rows: number; last: string; chunks: number } | undefined> {
  const { rows: exists } = await db.query<{ t: string | null }>('select to_regclass($1)::text as t', [
    partitionName('address_book_delta', runId, '_head'),
  ]);
  if (!exists[0]?.t) return undefined;
  const head = partition('address_book_delta', runId, '_head');
  const { rows } = await db.query<{ rows: string; last: string; chunks: string }>(
    `select h.n as rows, (select address from ${head} where seq = h.n) as last,
            (select count(*) from address_book_chunks where run_id = $1 and last_seq <= h.n) as chunks
       from (select max(seq) as n from ${head}) h`,
    [runId],
  );
  return { rows: Number(rows[0]!.rows), last: rows[0]!.last, chunks: Number(rows[0]!.chunks) };
}

/** Writes the first `limit` desired rows, in address order, as the additions 1..limit of the run's head table. */
export async function writeHead(c: PoolClient, runId: string, vaspDid: string, limit: number): Promise<number> {
  const ins = await c.query(
    `insert into ${partition('address_book_delta', runId, '_head')} (run_id, action, seq, address, asset, customer_ref, bytes)
     select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${ROW_BYTES_SQL}
       from (${desiredSql('', '')} limit ${Number(limit)}) d`,
    [runId, vaspDid],
  );
  return ins.rowCount ?? 0;
}

/** The head holds the whole desired set: it becomes the run's delta table. */
export async function headIsWholeDelta(c: PoolClient, runId: string): Promise<void> {
  await c.query(
    `alter table ${partition('address_book_delta', runId, '_head')} rename to ${partition('address_book_delta', runId)}`,
  );
}

/**
 * The head keeps rows 1..h (the row after them only told that there is a rest) and becomes the first range partition of
 * the run's delta, which is partitioned by seq. Partitioned tables cannot be unlogged; its partitions (head and rest) are.
 */
export async function attachHead(c: PoolClient, runId: string, h: number): Promise<void> {
  const head = partition('address_book_delta', runId, '_head');
  const delta = partition('address_book_delta', runId);
  const n = Number(h);
  await c.query(`delete from ${head} where seq = ${n + 1}`);
  await c.query(`alter table ${head} add primary key (run_id, action, seq), add check (seq <= ${n})`);
  await c.query(
    `create table ${delta} partition of address_book_delta for values in (${runIdLiteral(runId)}) partition by range (seq)`,
  );
  await c.query(`alter table ${delta} attach partition ${head} for values from (minvalue) to (${n + 1})`);
}

export async function setWatermark(c: PoolClient, runId: string, watermark: number): Promise<void> {
  await c.query('update address_book_runs set watermark = $2 where run_id = $1', [runId, watermark]);
}

/** Writes the desired rows above the head's last address, numbered from the head's size + 1, into the rest table. */
export async function writeRest(
  c: PoolClient,
  runId: string,
  vaspDid: string,
  head: { rows: number; last: string },
): Promise<number> {
  const ins = await c.query(
    `insert into ${partition('address_book_delta', runId, '_rest')} (run_id, action, seq, address, asset, customer_ref, bytes)
     select $1, 'add', $4::bigint + row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${ROW_BYTES_SQL}
       from (${desiredSql('and network_address collate "C" > $3', 'and address collate "C" > $3')}) d`,
    [runId, vaspDid, head.last, head.rows],
  );
  return ins.rowCount ?? 0;
}

/** The rest becomes the delta's second range partition, and the run's delta is complete: `desired` additions. */
export async function attachRest(c: PoolClient, runId: string, headRows: number, desired: number): Promise<void> {
  const rest = partition('address_book_delta', runId, '_rest');
  const n = Number(headRows);
  await c.query(`alter table ${rest} add primary key (run_id, action, seq), add check (seq > ${n})`);
  await c.query(
    `alter table ${partition('address_book_delta', runId)} attach partition ${rest} for values from (${n + 1}) to (maxvalue)`,
  );
  await c.query(
    `update address_book_runs set delta_ready = true, desired = $2, to_add = $2, to_update = 0, to_remove = 0, method = 'upload'
      where run_id = $1`,
    [runId, desired],
  );
}
