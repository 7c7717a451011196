import { withTransaction } from '../../db/transaction';
import { Context } from '@temporalio/activity';
import type { Pool, PoolClient } from 'pg';
import { loadConfig } from '../../lib/config';
import type { AddressBookConfig } from '../../lib/address-book/config';
import type {
  DeltaSummary,
  ReconcileMode,
  ReconcilePhase,
  ReconcileReport,
  ReconcileTrigger,
  RunSettings,
} from '../../lib/address-book/reconcile-types';
import { REGISTRY_LOCK } from '../../db/address-registry';
import { isAppError, UpstreamRejectedError, ValidationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import type { NetworkClient } from '../../network/client';
import {
  DELETE_QUERY_BUDGET,
  deleteAddresses,
  LISTING_PAGE_SIZE,
  listPage,
  networkTotal,
  registerCustomer,
  requestUploadUrl,
  type ListingPage,
} from '../../network/address-book';
import { postCsv, UploadUrlRefused } from '../../network/address-book';
import { chunkCsv, CSV_HEADER_BYTES, ROW_BYTES_SQL } from './upload';

export interface AddressBookActivityDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  /** The worker's settings; read from the environment when absent. */
  addressBook?: AddressBookConfig;
}

/** A run's staging partitions are named after it. */
const partition = (table: 'address_book_listing' | 'address_book_delta', runId: string) => `${table}_${runId.replace(/-/g, '')}`;
/** Memory for the diff's sorts: a million-row desired set sorts in memory instead of in temporary files. */
const DIFF_WORK_MEM = '256MB';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function heartbeat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    /* called outside an activity (the benchmark's direct calls) */
  }
}

/** Heartbeats every 10 s while `fn` runs: one long SQL statement (a diff over millions of rows) is not a dead worker. */
async function withHeartbeat<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat({ [what]: 'in progress' }), 10_000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

const tx = withTransaction;

interface RunRow {
  run_id: string;
  vasp_did: string;
  status: string;
  mode: 'full' | 'incremental';
  watermark: string | null;
  listed_pages: number;
  listing_done: boolean;
  network_before: string | null;
  verify_pages: number;
  verify_done: boolean;
  network_after: string | null;
  delta_ready: boolean;
  mirror_built: boolean;
  desired: string | null;
  to_add: string | null;
  to_update: string | null;
  to_remove: string | null;
  method: DeltaSummary['method'] | null;
  removed_through: string;
  registered_through: string;
  rejected: string;
}

export function addressBookActivities(deps: AddressBookActivityDeps) {
  const { pool, network } = deps;
  let cfg: AddressBookConfig | undefined = deps.addressBook;
  const settings = () => (cfg ??= loadConfig().addressBook);

  async function run(runId: string): Promise<RunRow> {
    const { rows } = await pool.query<RunRow>('select * from address_book_runs where run_id = $1', [runId]);
    if (!rows[0]) throw new ValidationError('runId', `no address-book run ${runId}`);
    return rows[0];
  }

  async function setPhase(runId: string, phase: ReconcilePhase): Promise<void> {
    await pool.query('update address_book_runs set phase = $2 where run_id = $1', [runId, phase]);
  }

  /** Stores rejected rows (up to the configured number per run) and counts all of them. */
  async function reject(
    db: Pick<Pool | PoolClient, 'query'>,
    runId: string,
    rows: readonly { action: 'add' | 'remove'; address: string; asset?: string; customerRef?: string; reason: string }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await db.query(
      `insert into address_book_rejections (run_id, action, address, asset, customer_ref, reason)
       select $1, x, a, s, c, r from unnest($7::text[], $2::text[], $3::text[], $4::text[], $5::text[]) as t (x, a, s, c, r)
        limit greatest(0, $6 - (select count(*) from address_book_rejections where run_id = $1))
       on conflict (run_id, address) do nothing`,
      [runId, rows.map((r) => r.address), rows.map((r) => r.asset ?? ''), rows.map((r) => r.customerRef ?? ''),
        rows.map((r) => r.reason), settings().maxStoredRejections, rows.map((r) => r.action)],
    );
    await db.query('update address_book_runs set rejected = rejected + $2 where run_id = $1', [runId, rows.length]);
  }

  /** Pages through the network's listing into the run's staging partition, resuming at the first page not stored. */
  async function listInto(runId: string, vaspDid: string, kind: 'before' | 'after'): Promise<{ total: number; rows: number; distinct: number }> {
    const r = await run(runId);
    const pagesCol = kind === 'before' ? 'listed_pages' : 'verify_pages';
    const doneCol = kind === 'before' ? 'listing_done' : 'verify_done';
    const totalCol = kind === 'before' ? 'network_before' : 'network_after';
    let page = kind === 'before' ? r.listed_pages : r.verify_pages;
    let done = kind === 'before' ? r.listing_done : r.verify_done;
    let next: Promise<ListingPage> | undefined;
    while (!done) {
      const current = await (next ?? listPage(network, vaspDid, page));
      // Fetch the following page while this one is written.
      next = current.data.length >= LISTING_PAGE_SIZE ? listPage(network, vaspDid, page + 1) : undefined;
      next?.catch(() => undefined);
      const counts = new Map<string, { ref: string; n: number }>();
      for (const row of current.data) {
        const c = counts.get(row.address);
        if (c) c.n += 1;
        else counts.set(row.address, { ref: row.customer_ref ?? '', n: 1 });
      }
      done = current.data.length < LISTING_PAGE_SIZE;
      await tx(pool, async (c) => {
        if (counts.size > 0) {
          await c.query(
            `insert into ${partition('address_book_listing', runId)} (run_id, kind, address, customer_ref, n)
             select $1, $2, a, r, n from unnest($3::text[], $4::text[], $5::int[]) as t (a, r, n)
             on conflict (run_id, kind, address) do update set n = ${partition('address_book_listing', runId)}.n + excluded.n`,
            [runId, kind, [...counts.keys()], [...counts.values()].map((v) => v.ref), [...counts.values()].map((v) => v.n)],
          );
        }
        await c.query(
          `update address_book_runs set ${pagesCol} = $2, ${doneCol} = $3, ${totalCol} = $4, phase = $5 where run_id = $1`,
          [runId, page + 1, done, Number(current.pagination?.total ?? 0), kind === 'before' ? 'listing' : 'verifying'],
        );
      });
      page += 1;
      heartbeat({ kind, page });
    }
    const { rows } = await pool.query<{ rows: string; distinct: string }>(
      `select coalesce(sum(n), 0) as rows, count(*) as distinct from ${partition('address_book_listing', runId)} where kind = $1`,
      [kind],
    );
    const after = await run(runId);
    return {
      total: Number((kind === 'before' ? after.network_before : after.network_after) ?? 0),
      rows: Number(rows[0]!.rows),
      distinct: Number(rows[0]!.distinct),
    };
  }

  async function summary(r: RunRow): Promise<DeltaSummary> {
    const { rows } = await pool.query<{ chunks: string; remove_rows: string; distinct: string }>(
      `select (select count(*) from address_book_chunks where run_id = $1) as chunks,
              (select coalesce(sum(l.n), 0) from ${partition('address_book_delta', r.run_id)} d
                 join ${partition('address_book_listing', r.run_id)} l on l.kind = 'before' and l.address = d.address
                where d.action = 'remove') as remove_rows,
              (select count(*) from ${partition('address_book_listing', r.run_id)} where kind = 'before') as distinct`,
      [r.run_id],
    );
    return {
      desired: Number(r.desired ?? 0),
      networkBefore: Number(r.network_before ?? 0),
      networkBeforeDistinct: Number(rows[0]!.distinct),
      toAdd: Number(r.to_add ?? 0),
      toUpdate: Number(r.to_update ?? 0),
      toRemove: Number(r.to_remove ?? 0),
      removeRows: Number(rows[0]!.remove_rows),
      method: r.method ?? 'none',
      chunks: Number(rows[0]!.chunks),
    };
  }

  const mirrorPartition = (runId: string) => `address_book_mirror_${runId.replace(/-/g, '')}`;

  /**
   * A full run's mirror, built in a partition of its own from the run's starting listing and delta (what the network
   * will hold once everything is processed), while the uploads are under way. Idempotent; a run lock serialises a
   * retry with an attempt still running.
   */
  async function buildMirror(c: PoolClient, r: RunRow): Promise<void> {
    const listing = partition('address_book_listing', r.run_id);
    const delta = partition('address_book_delta', r.run_id);
    const part = mirrorPartition(r.run_id);
    await c.query(`drop table if exists ${part}`);
    await c.query(`create unlogged table ${part} partition of address_book_mirror for values in ('${r.run_id}')`);
    await c.query(
      `insert into ${part} (run_id, address, customer_ref, n)
       select $1, l.address, l.customer_ref, l.n from ${listing} l
        where l.kind = 'before' and not exists (select 1 from ${delta} d where d.action = 'remove' and d.address = l.address)`,
      [r.run_id],
    );
    await c.query(
      `insert into ${part} (run_id, address, customer_ref, n)
       select $1, d.address, d.customer_ref, 1 from ${delta} d where d.action = 'add'
       on conflict (run_id, address) do update set customer_ref = excluded.customer_ref`,
      [r.run_id],
    );
    await c.query('update address_book_runs set mirror_built = true where run_id = $1', [r.run_id]);
  }

  /**
   * Keeps what the network now holds as the mirror for the next incremental run, with the registry's watermark the
   * run reflects. A run verified by the whole listing takes that listing. Otherwise a full run takes the mirror it
   * built, an incremental run applies its delta to the current one; either way rows the network refused keep what
   * the network had before. Tombstones up to the watermark are no longer needed.
   */
  async function keepResult(c: PoolClient, r: RunRow): Promise<void> {
    const listing = partition('address_book_listing', r.run_id);
    const delta = partition('address_book_delta', r.run_id);
    const { rows: st } = await c.query<{ mirror_run_id: string }>('select mirror_run_id from address_book_state where vasp_did = $1', [r.vasp_did]);
    const previous = st[0]?.mirror_run_id;
    // An incremental run whose mirror vanished meanwhile (a failed run of the VASP in between) leaves none either.
    if (r.mode === 'incremental' && !previous) return forgetResult(c, r);
    const after = await c.query(`select 1 from ${listing} where kind = 'after' limit 1`);
    let mirrorRun: string;
    if (after.rowCount) {
      mirrorRun = r.run_id;
      const part = mirrorPartition(r.run_id);
      await c.query(`drop table if exists ${part}`);
      await c.query(`create unlogged table ${part} partition of address_book_mirror for values in ('${r.run_id}')`);
      await c.query(`insert into ${part} (run_id, address, customer_ref, n) select $1, address, customer_ref, n from ${listing} where kind = 'after'`, [r.run_id]);
    } else {
      if (r.mode === 'full') {
        if (!r.mirror_built) await buildMirror(c, r);
        mirrorRun = r.run_id;
      } else {
        mirrorRun = previous!;
        const part = mirrorPartition(mirrorRun);
        await c.query(`delete from ${part} m using ${delta} d where d.action = 'remove' and d.address = m.address`);
        await c.query(
          `insert into ${part} (run_id, address, customer_ref, n)
           select $1, d.address, d.customer_ref, 1 from ${delta} d where d.action = 'add'
           on conflict (run_id, address) do update set customer_ref = excluded.customer_ref`,
          [mirrorRun],
        );
      }
      // What the network refused stays as the run found it: refused additions go (or keep their old customerRef),
      // refused deletions stay.
      const part = mirrorPartition(mirrorRun);
      await c.query(
        `delete from ${part} m using address_book_rejections x
          where x.run_id = $1 and x.action = 'add' and x.address = m.address`,
        [r.run_id],
      );
      await c.query(
        `insert into ${part} (run_id, address, customer_ref, n)
         select $2, l.address, l.customer_ref, l.n from address_book_rejections x
           join ${listing} l on l.kind = 'before' and l.address = x.address
          where x.run_id = $1
         on conflict (run_id, address) do update set customer_ref = excluded.customer_ref, n = excluded.n`,
        [r.run_id, mirrorRun],
      );
    }
    const fresh = await run(r.run_id);
    await c.query(
      `insert into address_book_state (vasp_did, run_id, mirror_run_id, watermark, network_rows, distinct_rows)
       values ($1, $2, $3, $4, $5, (select count(*) from address_book_mirror where run_id = $3))
       on conflict (vasp_did) do update set run_id = excluded.run_id, mirror_run_id = excluded.mirror_run_id,
         watermark = excluded.watermark, network_rows = excluded.network_rows, distinct_rows = excluded.distinct_rows,
         updated_at = now()`,
      [r.vasp_did, r.run_id, mirrorRun, fresh.watermark ?? 0, fresh.network_after ?? 0],
    );
    if (previous && previous !== mirrorRun) await c.query(`drop table if exists ${mirrorPartition(previous)}`);
    await c.query('delete from address_registry_removed where vasp_did = $1 and change_seq <= $2', [r.vasp_did, fresh.watermark ?? 0]);
  }

  /** After a failed run nobody knows what the network took: no mirror, so the next run lists it all. */
  async function forgetResult(c: PoolClient, r: RunRow): Promise<void> {
    const { rows: st } = await c.query<{ mirror_run_id: string }>('delete from address_book_state where vasp_did = $1 returning mirror_run_id', [r.vasp_did]);
    for (const id of new Set([r.run_id, ...st.map((x) => x.mirror_run_id)])) await c.query(`drop table if exists ${mirrorPartition(id)}`);
  }

  /**
   * Full or incremental. An incremental run needs the verified result of an earlier run (the mirror, intact) and a
   * network whose count still matches it; anything else (a first run, a failed last run, addresses added or removed
   * behind our back, a lost mirror) makes it a full run.
   */
  async function chooseMode(vaspDid: string, requested: ReconcileMode): Promise<{ mode: 'full' | 'incremental'; reason: string }> {
    if (requested === 'full') return { mode: 'full', reason: 'a full run was asked for' };
    const { rows } = await pool.query<{ network_rows: string; distinct_rows: string; mirror: string }>(
      `select network_rows, distinct_rows, (select count(*) from address_book_mirror m where m.run_id = s.mirror_run_id) as mirror
         from address_book_state s where vasp_did = $1`,
      [vaspDid],
    );
    const st = rows[0];
    if (!st) return { mode: 'full', reason: 'no verified result of an earlier run' };
    if (st.mirror !== st.distinct_rows) return { mode: 'full', reason: 'the mirror of the last result was lost' };
    const total = await networkTotal(network, vaspDid);
    if (total !== Number(st.network_rows)) {
      return { mode: 'full', reason: `the network lists ${total} rows where the last run left ${st.network_rows}` };
    }
    return { mode: 'incremental', reason: 'the network matches the last verified result' };
  }

  /**
   * The run's delta is written into a table of its own, without its primary key, and attached as the run's partition
   * once complete (attachDeltaTable): a million rows inserted through an index cost several times the index built
   * over them afterwards. The check constraint lets the attachment skip its validation scan.
   */
  async function createDeltaTable(c: PoolClient, runId: string, table = partition('address_book_delta', runId)): Promise<void> {
    await c.query(
      `create unlogged table ${table}
         (like address_book_delta including defaults including constraints, check (run_id = '${runId}'))`,
    );
  }

  async function attachDeltaTable(c: PoolClient, runId: string): Promise<void> {
    const delta = partition('address_book_delta', runId);
    await c.query(`alter table ${delta} add primary key (run_id, action, seq)`);
    await c.query(`alter table address_book_delta attach partition ${delta} for values in ('${runId}')`);
  }

  /**
   * The desired set, sorted by network address: each entry's network address, plus the master address of every tagged
   * entry (see abComputeDelta); `$2` is the VASP. `only` and `onlyMaster` narrow the two sides (same address space).
   */
  const desiredSql = (only: string, onlyMaster: string) => `select distinct on (na) na as address, asset, customer_ref from (
        select network_address collate "C" as na, asset, customer_ref, 0 as pri from address_registry where vasp_did = $2 ${only}
        union all
        select address collate "C", asset, customer_ref, 1 from address_registry where vasp_did = $2 and tag <> '' ${onlyMaster}
      ) x order by na, pri, asset, customer_ref`;
  const bytes = ROW_BYTES_SQL.replace(/\b(asset|address|customer_ref)\b/g, 'd.$1');

  /**
   * Writes the delta rows; returns the counts. Network addresses are compared and ordered with COLLATE "C": the same
   * order as the database's C.UTF-8 (code points), without the locale library's comparisons.
   */
  async function writeDelta(
    c: PoolClient,
    q: { runId: string; vaspDid: string; listing: string; delta: string; only: string; onlyMaster: string },
  ): Promise<{ desired: string; to_add: string; to_update: string; to_remove: string }> {
    const desired = desiredSql(q.only, q.onlyMaster);
    const listed = await c.query(`select 1 from ${q.listing} where kind = 'before' limit 1`);
    if (!listed.rowCount) {
      // Nothing listed (a first sync): every desired row is an addition, numbered in the order the desired set is
      // already sorted in, so the rows are sorted once.
      const ins = await c.query(
        `insert into ${q.delta} (run_id, action, seq, address, asset, customer_ref, bytes)
         select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${bytes} from (${desired}) d`,
        [q.runId, q.vaspDid],
      );
      const n = String(ins.rowCount ?? 0);
      return { desired: n, to_add: n, to_update: '0', to_remove: '0' };
    }
    const { rows } = await c.query<{ desired: string; to_add: string; to_update: string; to_remove: string }>(
      `with desired as materialized (${desired}),
       listed as (
         select address collate "C" as address, customer_ref from ${q.listing} where kind = 'before'
       ), adds as (
         insert into ${q.delta} (run_id, action, seq, address, asset, customer_ref, is_update, bytes)
         select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, l.address is not null, ${bytes}
           from desired d left join listed l on l.address = d.address
          where l.address is null or l.customer_ref is distinct from d.customer_ref
         returning is_update
       ), removes as (
         insert into ${q.delta} (run_id, action, seq, address)
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
   * Cuts the additions into chunks by bytes (bp) and by rows (rp); both grow with seq, so every (bp, rp) group is a
   * contiguous range of at most chunkRows rows and at most budget + one row's bytes. When all the additions fit the
   * budget (bp is 0 throughout), the chunks are the row ranges and no running sum is needed.
   */
  async function planChunks(c: PoolClient, runId: string, delta: string, s: AddressBookConfig, after = { seq: 0, chunkNo: 0 }): Promise<void> {
    const { rows: t } = await c.query<{ max: number; sum: string }>(
      `select max(bytes) as max, sum(bytes) as sum from ${delta} where action = 'add'`,
    );
    const budget = s.chunkMaxBytes - CSV_HEADER_BYTES - t[0]!.max;
    if (budget <= 0) {
      throw new ValidationError('ADDRESS_BOOK_CHUNK_MAX_BYTES', `${s.chunkMaxBytes} bytes cannot hold the header and a row of ${t[0]!.max} bytes`);
    }
    // budget is a whole number computed from the settings, written into the statement.
    const bp = Number(t[0]!.sum) <= budget ? '0' : `(sum(bytes) over (order by seq rows unbounded preceding) - bytes) / ${budget}`;
    await c.query(
      `insert into address_book_chunks (run_id, chunk_no, first_seq, last_seq, rows, bytes)
       select $1, $5 + row_number() over (order by bp, rp), min(seq), max(seq), count(*), sum(bytes) + $3
         from (select seq, bytes, ${bp} as bp, (seq - $4 - 1) / $2 as rp from ${delta} where action = 'add') x
        group by bp, rp`,
      [runId, s.chunkRows, CSV_HEADER_BYTES, after.seq, after.chunkNo],
    );
  }

  /**
   * Runs `work` in a diff's transaction, committed when it returns: the registry's high-water mark, and a snapshot that
   * holds exactly the writes up to it. Writers hold REGISTRY_LOCK shared for their whole transaction, so with it taken exclusively none is in flight
   * when the snapshot is taken; it is released at once, and later writes get higher change_seq values.
   */
  async function inSnapshot<T>(work: (c: PoolClient, watermark: number) => Promise<T>): Promise<T> {
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

  /** The end of a whole diff: method, chunks, the delta attached as the run's partition, the counts and watermark. */
  async function finishDelta(
    c: PoolClient,
    input: { runId: string; vaspDid: string },
    incremental: boolean,
    counts: { desired: string; to_add: string; to_update: string; to_remove: string },
    watermark: number,
  ): Promise<void> {
    const s = settings();
    const adds = Number(counts.to_add) + Number(counts.to_update);
    const method = adds === 0 ? 'none' : adds <= s.registerThreshold ? 'register' : 'upload';
    if (method === 'upload') await planChunks(c, input.runId, partition('address_book_delta', input.runId), s);
    await attachDeltaTable(c, input.runId);
    // An incremental run saw only the changed addresses: the whole desired set is the mirror plus its delta.
    let desired = Number(counts.desired);
    if (incremental) {
      const { rows: m } = await c.query<{ n: string }>('select distinct_rows as n from address_book_state where vasp_did = $1', [input.vaspDid]);
      desired = Number(m[0]!.n) + Number(counts.to_add) - Number(counts.to_remove);
    }
    await c.query(
      `update address_book_runs set delta_ready = true, desired = $2, to_add = $3, to_update = $4, to_remove = $5, method = $6,
              watermark = $7
        where run_id = $1`,
      [input.runId, desired, counts.to_add, counts.to_update, counts.to_remove, method, watermark],
    );
  }

  /**
   * A first sync's head: the sub-partition holding rows 1..H of the delta, once committed (see computeHead). Its
   * size, last address and chunks are read from it, so a retry returns what the first attempt committed.
   */
  async function committedHead(runId: string): Promise<{ rows: number; last: string; chunks: number } | undefined> {
    const head = `${partition('address_book_delta', runId)}_head`;
    const { rows: exists } = await pool.query<{ t: string | null }>('select to_regclass($1)::text as t', [head]);
    if (!exists[0]?.t) return undefined;
    const { rows } = await pool.query<{ rows: string; last: string; chunks: string }>(
      `select h.n as rows, (select address from ${head} where seq = h.n) as last,
              (select count(*) from address_book_chunks where run_id = $1 and last_seq <= h.n) as chunks
         from (select max(seq) as n from ${head}) h`,
      [runId],
    );
    return { rows: Number(rows[0]!.rows), last: rows[0]!.last, chunks: Number(rows[0]!.chunks) };
  }

  /**
   * A first sync (a full run whose listing is empty, so every desired row is an addition) starts its uploads before
   * the whole delta exists: this writes the first H = headChunks × chunkRows desired rows in address order as rows
   * 1..H, plans their chunks and commits, in a snapshot taken like the whole diff's, whose watermark (W1) becomes the
   * run's. The rest (addresses above the head's last) follows in computeRest, in a later snapshot, while the head's
   * chunks upload. The run's delta is then partitioned by seq: the head and the rest are written unindexed and get
   * their keys once complete, like the whole diff's delta. Any other run, a head setting of 0, or a head that would
   * go through registerCustomer computes the whole delta at once (complete: true), as does a desired set of at most
   * H rows, which is then all head.
   */
  async function computeHead(input: { runId: string; vaspDid: string }): Promise<
    { complete: true; delta: DeltaSummary } | { complete: false; headRows: number; headChunks: number }
  > {
    const r = await run(input.runId);
    if (r.delta_ready) return { complete: true, delta: await summary(r) };
    const committed = await committedHead(input.runId);
    if (committed) return { complete: false, headRows: committed.rows, headChunks: committed.chunks };
    const s = settings();
    const h = s.headChunks * s.chunkRows;
    const listing = partition('address_book_listing', input.runId);
    const listed = r.listing_done ? await pool.query(`select 1 from ${listing} where kind = 'before' limit 1`) : undefined;
    if (r.mode !== 'full' || !listed || listed.rowCount || Number(r.network_before ?? 0) !== 0 || h === 0 || h <= s.registerThreshold) {
      return { complete: true, delta: await computeDelta(input) };
    }
    await setPhase(input.runId, 'diff');
    const delta = partition('address_book_delta', input.runId);
    const head = `${delta}_head`;
    let whole = false;
    await inSnapshot(async (c, watermark) => {
      // Leftovers of an older run's begin step (which created the delta partition empty).
      await c.query(`drop table if exists ${delta}`);
      await c.query('delete from address_book_chunks where run_id = $1', [input.runId]);
      await c.query(`set local work_mem = '${DIFF_WORK_MEM}'`);
      await createDeltaTable(c, input.runId, head);
      // One row more than the head tells whether there is a rest.
      const ins = await c.query(
        `insert into ${head} (run_id, action, seq, address, asset, customer_ref, bytes)
         select $1, 'add', row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${bytes}
           from (${desiredSql('', '')} limit ${h + 1}) d`,
        [input.runId, input.vaspDid],
      );
      const n = ins.rowCount ?? 0;
      if (n <= h) {
        // The whole desired set fits the head: it is the run's whole delta.
        whole = true;
        await c.query(`alter table ${head} rename to ${delta}`);
        await finishDelta(c, input, false, { desired: String(n), to_add: String(n), to_update: '0', to_remove: '0' }, watermark);
      } else {
        await c.query(`delete from ${head} where seq = ${h + 1}`);
        await c.query(`alter table ${head} add primary key (run_id, action, seq), add check (seq <= ${h})`);
        // Partitioned tables cannot be unlogged; its partitions (head and rest) are.
        await c.query(`create table ${delta} partition of address_book_delta for values in ('${input.runId}') partition by range (seq)`);
        await c.query(`alter table ${delta} attach partition ${head} for values from (minvalue) to (${h + 1})`);
        await planChunks(c, input.runId, head, s);
        await c.query('update address_book_runs set watermark = $2 where run_id = $1', [input.runId, watermark]);
      }
    });
    if (whole) return { complete: true, delta: await summary(await run(input.runId)) };
    const done = (await committedHead(input.runId))!;
    return { complete: false, headRows: done.rows, headChunks: done.chunks };
  }

  /**
   * The rest of a first sync after its head (computeHead): the desired rows whose address sorts above the head's last,
   * numbered from H + 1, their chunks numbered after the head's, in a snapshot of its own (S2, its one statement's). The run keeps the head's
   * watermark W1, the lower one: a row changed between W1 and S2 in the head's range was uploaded as of W1 and has a
   * change_seq above W1, so the next incremental run compares it with the mirror (built from this delta, i.e. what was
   * uploaded); one in the rest's range already shows S2's value, so comparing it again finds nothing. No registry lock:
   * any later snapshot holds every write up to W1.
   */
  async function computeRest(input: { runId: string; vaspDid: string }, h: { rows: number; last: string; chunks: number }): Promise<void> {
    const s = settings();
    const delta = partition('address_book_delta', input.runId);
    const rest = `${delta}_rest`;
    // Read committed: the registry is read by one statement (the insert), which sees one snapshot by itself, and the
    // head's uploads update the run row meanwhile, which a repeatable-read transaction could not update after.
    await tx(pool, async (c) => {
      await c.query('delete from address_book_chunks where run_id = $1 and chunk_no > $2', [input.runId, h.chunks]);
      await c.query(`set local work_mem = '${DIFF_WORK_MEM}'`);
      await createDeltaTable(c, input.runId, rest);
      const ins = await c.query(
        `insert into ${rest} (run_id, action, seq, address, asset, customer_ref, bytes)
         select $1, 'add', $4::bigint + row_number() over (order by d.address), d.address, d.asset, d.customer_ref, ${bytes}
           from (${desiredSql('and network_address collate "C" > $3', 'and address collate "C" > $3')}) d`,
        [input.runId, input.vaspDid, h.last, h.rows],
      );
      const n = ins.rowCount ?? 0;
      if (n > 0) await planChunks(c, input.runId, rest, s, { seq: h.rows, chunkNo: h.chunks });
      await c.query(`alter table ${rest} add primary key (run_id, action, seq), add check (seq > ${h.rows})`);
      await c.query(`alter table ${delta} attach partition ${rest} for values from (${h.rows + 1}) to (maxvalue)`);
      await c.query(
        `update address_book_runs set delta_ready = true, desired = $2, to_add = $2, to_update = 0, to_remove = 0, method = 'upload'
          where run_id = $1`,
        [input.runId, h.rows + n],
      );
    });
  }

  async function computeDelta(input: { runId: string; vaspDid: string }): Promise<DeltaSummary> {
    const r = await run(input.runId);
    if (r.delta_ready) return summary(r);
    const head = await committedHead(input.runId);
    if (head) {
      await setPhase(input.runId, 'diff');
      await computeRest(input, head);
      return summary(await run(input.runId));
    }
    const incremental = r.mode === 'incremental';
    if (!incremental && !r.listing_done) throw new ValidationError('runId', 'the listing of this run is not complete');
    await setPhase(input.runId, 'diff');
    const delta = partition('address_book_delta', input.runId);
    const listing = partition('address_book_listing', input.runId);
    // An older run's begin step created the delta partition empty; the diff now creates it itself (see createDeltaTable).
    await pool.query(`drop table if exists ${delta}`);
    await inSnapshot(async (c, watermark) => {
      await c.query('delete from address_book_chunks where run_id = $1', [input.runId]);
      let previous = 0;
      if (incremental) {
        // The starting point is the mirror, for the network addresses the registry changed since the last run (an
        // entry's own address and, for a tagged entry, its master, whether the entry changed or went) and those the
        // network refused in the last run.
        const { rows: st } = await c.query<{ watermark: string; network_rows: string; run_id: string; mirror_run_id: string }>(
          'select watermark, network_rows, run_id, mirror_run_id from address_book_state where vasp_did = $1',
          [input.vaspDid],
        );
        if (!st[0]) throw new ValidationError('mode', 'incremental run without a verified earlier result');
        previous = Number(st[0].watermark);
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
          [input.vaspDid, previous, watermark, st[0].run_id],
        );
        await c.query('alter table affected add primary key (address)');
        await c.query(
          `insert into ${listing} (run_id, kind, address, customer_ref, n)
           select $1, 'before', m.address, m.customer_ref, m.n from address_book_mirror m join affected a using (address)
            where m.run_id = $2`,
          [input.runId, st[0].mirror_run_id],
        );
        await c.query(
          `update address_book_runs set listing_done = true, network_before = $2, listed_pages = 0 where run_id = $1`,
          [input.runId, st[0].network_rows],
        );
      } else {
        // A fresh partition has no statistics: without them the diff's joins are planned blind.
        await c.query(`analyze ${listing}`);
      }
      const only = incremental ? 'and network_address in (select address from affected)' : '';
      const onlyMaster = incremental ? 'and address in (select address from affected)' : '';
      await c.query(`set local work_mem = '${DIFF_WORK_MEM}'`);
      await createDeltaTable(c, input.runId);
      const counts = await writeDelta(c, { runId: input.runId, vaspDid: input.vaspDid, listing, delta, only, onlyMaster });
      await finishDelta(c, input, incremental, counts, watermark);
    });
    return summary(await run(input.runId));
  }

  async function buildRunMirror(input: { runId: string }): Promise<{ built: boolean }> {
    const r = await run(input.runId);
    if (r.mode !== 'full' || r.mirror_built) return { built: r.mirror_built };
    await tx(pool, async (c) => {
      await c.query('select pg_advisory_xact_lock($1, hashtext($2))', [REGISTRY_LOCK % 2 ** 31, input.runId]);
      const again = await c.query<{ mirror_built: boolean; status: string }>(
        'select mirror_built, status from address_book_runs where run_id = $1',
        [input.runId],
      );
      // A run that ended meanwhile (failed while this was queued) keeps no mirror.
      if (again.rows[0]?.status === 'running' && !again.rows[0].mirror_built) await buildMirror(c, r);
    });
    return { built: true };
  }

  return {
    /**
     * Records the run and takes the VASP's run lock (one running run per VASP). A VASP with a run in progress gets a
     * 'skipped' record instead. Creates the run's listing partition. Returns the settings the run follows.
     */
    async abBeginRun(input: { runId: string; vaspDid: string; workflowId: string; trigger: ReconcileTrigger; mode?: ReconcileMode }): Promise<
      { started: true; settings: RunSettings; mode: 'full' | 'incremental'; modeReason: string } | { started: false; busyRunId: string }
    > {
      if (!UUID.test(input.runId)) throw new ValidationError('runId', 'must be a UUID');
      const s = settings();
      const out: RunSettings = {
        chunksPerExecution: s.chunksPerExecution,
        processingTimeoutMs: s.processingTimeoutMs,
        pollIntervalMs: s.pollIntervalMs,
        settleMs: s.settleMs,
        verify: s.verify,
      };
      const existing = await pool.query<{ status: string; mode: 'full' | 'incremental'; error: string | null }>(
        'select status, mode, error from address_book_runs where run_id = $1',
        [input.runId],
      );
      let chosen = existing.rows[0] ? { mode: existing.rows[0].mode, reason: existing.rows[0].error ?? '' } : undefined;
      if (!existing.rows[0]) {
        try {
          // Taken before the lock: a run that then finds the VASP busy has only read.
          chosen = await chooseMode(input.vaspDid, input.mode ?? 'auto');
          await pool.query(
            `insert into address_book_runs (run_id, vasp_did, workflow_id, trigger, mode) values ($1, $2, $3, $4, $5)`,
            [input.runId, input.vaspDid, input.workflowId, input.trigger, chosen.mode],
          );
        } catch (e) {
          if ((e as { code?: string }).code !== '23505') throw e;
          const busy = await pool.query<{ run_id: string }>(
            `select run_id from address_book_runs where vasp_did = $1 and status = 'running'`,
            [input.vaspDid],
          );
          const busyRunId = busy.rows[0]?.run_id ?? 'unknown';
          await pool.query(
            `insert into address_book_runs (run_id, vasp_did, workflow_id, trigger, status, phase, finished_at, error)
             values ($1, $2, $3, $4, 'skipped', 'skipped', now(), $5) on conflict (run_id) do nothing`,
            [input.runId, input.vaspDid, input.workflowId, input.trigger, `run ${busyRunId} was in progress for this VASP`],
          );
          return { started: false, busyRunId };
        }
      } else if (existing.rows[0].status === 'skipped') {
        const busy = await pool.query<{ error: string }>('select error from address_book_runs where run_id = $1', [input.runId]);
        return { started: false, busyRunId: /run (\S+)/.exec(busy.rows[0]?.error ?? '')?.[1] ?? 'unknown' };
      }
      // The delta's partition is created by the diff (createDeltaTable).
      await pool.query(
        `create unlogged table if not exists ${partition('address_book_listing', input.runId)} partition of address_book_listing
           for values in ('${input.runId}')`,
      );
      return { started: true, settings: out, mode: chosen!.mode, modeReason: chosen!.reason };
    },

    /** The network's listing at the start of the run, into staging. */
    async abListNetwork(input: { runId: string; vaspDid: string }) {
      return listInto(input.runId, input.vaspDid, 'before');
    },

    /**
     * The diff, in one statement over one snapshot of the registry: the desired set (each entry's network address,
     * plus the master address of every tagged entry) against the listing. The network lists no asset per row, so the
     * two sides are compared on the address string as the network stores it (`<address>:<tag>` included), and on
     * customerRef; when several registry entries map to one network address (the same address for two assets, a
     * master shared by several tags) the untagged entry wins, then the first asset in order. Numbers the rows to add
     * and to remove, decides between single registrations and uploads, and cuts the uploads into chunks that respect
     * both the row and the byte limit. Running it again after it completed changes nothing.
     */
    async abComputeDelta(input: { runId: string; vaspDid: string }): Promise<DeltaSummary> {
      return withHeartbeat('diff', () => computeDelta(input));
    },

    /**
     * A first sync's head (see computeHead): the first chunks' rows, committed so their uploads can start while
     * abComputeDelta computes the rest. Other runs get their whole delta here (complete). Idempotent.
     */
    async abComputeHead(input: { runId: string; vaspDid: string }) {
      return withHeartbeat('diff', () => computeHead(input));
    },

    /** Builds a full run's mirror (see buildMirror): started beside the removals and uploads, awaited before the end. */
    async abBuildMirror(input: { runId: string }): Promise<{ built: boolean }> {
      return withHeartbeat('mirror', () => buildRunMirror(input));
    },

    /** Deletes what the registry no longer has, in batches that fit a request line; resumes after the last batch. */
    async abApplyRemovals(input: { runId: string; vaspDid: string }): Promise<{ removed: number; rejected: number; refusedListingRows: number }> {
      await setPhase(input.runId, 'removing');
      const delta = partition('address_book_delta', input.runId);
      let through = Number((await run(input.runId)).removed_through);
      let removed = 0;
      let rejected = 0;
      for (;;) {
        const { rows } = await pool.query<{ seq: string; address: string }>(
          `select seq, address from ${delta} where action = 'remove' and seq > $1 order by seq limit 2000`,
          [through],
        );
        if (rows.length === 0) break;
        let i = 0;
        while (i < rows.length) {
          const batch: string[] = [];
          let len = 0;
          while (i < rows.length) {
            const enc = encodeURIComponent(rows[i]!.address).length + 3;
            if (batch.length > 0 && len + enc > DELETE_QUERY_BUDGET) break;
            batch.push(rows[i]!.address);
            len += enc;
            i += 1;
          }
          const last = Number(rows[i - 1]!.seq);
          try {
            await deleteAddresses(network, input.vaspDid, batch);
            removed += batch.length;
            await pool.query('update address_book_runs set removed_through = $2 where run_id = $1', [input.runId, last]);
          } catch (e) {
            if (!(isAppError(e) && !e.retryable)) throw e;
            // The network refused this batch for good: record why, go on with the rest.
            await tx(pool, async (c) => {
              await reject(c, input.runId, batch.map((address) => ({ action: 'remove' as const, address, reason: `deletion refused: ${e.message}` })));
              await c.query('update address_book_runs set removed_through = $2 where run_id = $1', [input.runId, last]);
            });
            rejected += batch.length;
          }
          through = last;
          heartbeat({ removedThrough: through });
        }
      }
      // Listing rows the refused deletions leave in place (over every attempt of this activity).
      const { rows: refused } = await pool.query<{ n: string }>(
        `select coalesce(sum(l.n), 0) as n from address_book_rejections r
           join ${partition('address_book_listing', input.runId)} l on l.kind = 'before' and l.address = r.address
          where r.run_id = $1 and r.action = 'remove'`,
        [input.runId],
      );
      return { removed, rejected, refusedListingRows: Number(refused[0]!.n) };
    },

    /**
     * Waits (bounded) until the network's listing total reaches the expected count: at most `expected` after
     * deletions ('down'), at least `expected` after additions ('up'). Processing is asynchronous at the network, so
     * this is how a run knows it is done. Stops early when the count has moved away from `from` (the count before the
     * changes) and then stood still for `settleMs`: rows the network refused never arrive. Does not fail on timeout:
     * the verification names what is missing.
     */
    async abAwaitNetworkCount(input: {
      runId: string;
      vaspDid: string;
      from: number;
      expected: number;
      direction: 'down' | 'up';
      timeoutMs: number;
      pollMs: number;
      settleMs: number;
    }): Promise<{ reached: boolean; count: number; waitedMs: number; settled: boolean }> {
      await setPhase(input.runId, 'processing');
      const started = Date.now();
      let last: number | undefined;
      let lastChange = started;
      for (;;) {
        const count = await networkTotal(network, input.vaspDid);
        const now = Date.now();
        if (count !== last) {
          last = count;
          lastChange = now;
        }
        const reached = input.direction === 'down' ? count <= input.expected : count >= input.expected;
        const waitedMs = now - started;
        const settled = count !== input.from && now - lastChange >= input.settleMs;
        if (reached || settled || waitedMs >= input.timeoutMs) return { reached, count, waitedMs, settled };
        heartbeat({ count, expected: input.expected });
        await new Promise((r) => setTimeout(r, Math.min(input.pollMs, Math.max(0, input.timeoutMs - waitedMs))));
      }
    },

    /** A small delta: one `registerCustomer` per row, a few at a time; a row the network refuses is recorded. */
    async abRegisterAdds(input: { runId: string; vaspDid: string }): Promise<{ registered: number; rejected: number; rejectedNew: number }> {
      await setPhase(input.runId, 'adding');
      const delta = partition('address_book_delta', input.runId);
      const concurrency = settings().registerConcurrency;
      let through = Number((await run(input.runId)).registered_through);
      let registered = 0;
      let rejected = 0;
      for (;;) {
        const { rows } = await pool.query<{ seq: string; address: string; asset: string; customer_ref: string }>(
          `select seq, address, asset, customer_ref from ${delta} where action = 'add' and seq > $1 order by seq limit $2`,
          [through, concurrency],
        );
        if (rows.length === 0) break;
        const outcomes = await Promise.all(
          rows.map(async (row) => {
            try {
              await registerCustomer(network, { vaspDID: input.vaspDid, address: row.address, customerRef: row.customer_ref, asset: row.asset });
              return undefined;
            } catch (e) {
              // 409: the network says it has it already, which is what we wanted.
              if (isAppError(e) && e.httpStatus === 409) return undefined;
              if (isAppError(e) && !e.retryable) return { action: 'add' as const, address: row.address, asset: row.asset, customerRef: row.customer_ref, reason: e.message };
              throw e;
            }
          }),
        );
        const refused = outcomes.filter((o): o is NonNullable<typeof o> => o !== undefined);
        through = Number(rows[rows.length - 1]!.seq);
        await tx(pool, async (c) => {
          await reject(c, input.runId, refused);
          await c.query('update address_book_runs set registered_through = $2 where run_id = $1', [input.runId, through]);
        });
        registered += rows.length - refused.length;
        rejected += refused.length;
        heartbeat({ registeredThrough: through });
      }
      // New addresses the network refused (over every attempt): the count will not include them.
      const { rows: refusedNew } = await pool.query<{ n: string }>(
        `select count(*) as n from address_book_rejections r
           join ${delta} d on d.action = 'add' and d.address = r.address and not d.is_update
          where r.run_id = $1 and r.action = 'add'`,
        [input.runId],
      );
      return { registered, rejected, rejectedNew: Number(refusedNew[0]!.n) };
    },

    /**
     * Uploads one chunk, exactly once: an uploaded chunk is never sent again, and the state moves planned →
     * uploading → uploaded in Postgres around the POST. A chunk found 'uploading' was interrupted by a crash; if the
     * POST had completed, the network's count shows it (`expectedIfUploaded`), so it is only sent again when the count
     * says the network never got it. Once the POST has started, cancellation (a worker shutting down) lets it finish
     * and records it, so a graceful shutdown never leaves an ambiguous chunk. An expired upload URL gets a new one.
     */
    async abUploadChunk(input: { runId: string; vaspDid: string; chunkNo: number; baseCount: number; timeoutMs: number; pollMs: number }): Promise<
      { chunkNo: number; rows: number; bytes: number; sent: boolean }
    > {
      const { rows: found } = await pool.query<{
        first_seq: string; last_seq: string; rows: number; bytes: string; state: 'planned' | 'uploading' | 'uploaded';
      }>('select first_seq, last_seq, rows, bytes, state from address_book_chunks where run_id = $1 and chunk_no = $2', [input.runId, input.chunkNo]);
      const chunk = found[0];
      if (!chunk) throw new ValidationError('chunkNo', `run ${input.runId} has no chunk ${input.chunkNo}`);
      if (chunk.state === 'uploaded') return { chunkNo: input.chunkNo, rows: chunk.rows, bytes: Number(chunk.bytes), sent: false };
      await setPhase(input.runId, 'adding');
      if (chunk.state === 'uploading') {
        // The count the network shows once this chunk and the ones before it are processed: new rows only.
        const { rows: news } = await pool.query<{ n: string }>(
          `select count(*) as n from ${partition('address_book_delta', input.runId)} where action = 'add' and not is_update and seq <= $1`,
          [chunk.last_seq],
        );
        const expectedIfUploaded = input.baseCount + Number(news[0]!.n);
        const deadline = Date.now() + Math.min(input.timeoutMs, 5 * 60_000);
        for (;;) {
          const count = await networkTotal(network, input.vaspDid);
          if (count >= expectedIfUploaded) {
            await pool.query(
              `update address_book_chunks set state = 'uploaded', uploaded_at = now(), upload_key = coalesce(upload_key, 'inferred from the listing')
                where run_id = $1 and chunk_no = $2`,
              [input.runId, input.chunkNo],
            );
            return { chunkNo: input.chunkNo, rows: chunk.rows, bytes: Number(chunk.bytes), sent: false };
          }
          if (Date.now() >= deadline) break;
          heartbeat({ chunkNo: input.chunkNo, probing: count });
          await new Promise((r) => setTimeout(r, input.pollMs));
        }
      }
      const s = settings();
      const fileName = `address-book-${input.runId}-${String(input.chunkNo).padStart(5, '0')}.csv`;
      for (let urlAttempt = 1; ; urlAttempt++) {
        const uploadUrl = await requestUploadUrl(network, input.vaspDid);
        await pool.query(
          `update address_book_chunks set state = 'uploading', attempts = attempts + 1, started_at = now() where run_id = $1 and chunk_no = $2`,
          [input.runId, input.chunkNo],
        );
        let rowsRead = 0;
        const csv = chunkCsv(pool, input.runId, Number(chunk.first_seq), Number(chunk.last_seq), (n) => {
          rowsRead += n;
          heartbeat({ chunkNo: input.chunkNo, rows: rowsRead });
        });
        try {
          const { bytes, response } = await postCsv(uploadUrl, fileName, csv, s.chunkMaxBytes, input.timeoutMs);
          if (rowsRead !== chunk.rows) {
            throw new ValidationError('chunk', `chunk ${input.chunkNo} of run ${input.runId} read ${rowsRead} rows, planned ${chunk.rows}: the run's staging was lost`);
          }
          const meta = response.uploadedFile?.metadata;
          await pool.query(
            `update address_book_chunks set state = 'uploaded', uploaded_at = now(), upload_key = $3, upload_counter = $4
              where run_id = $1 and chunk_no = $2`,
            [input.runId, input.chunkNo, meta?.key ?? response.uploadedFile?.name ?? null, meta?.extra?.counter ?? null],
          );
          return { chunkNo: input.chunkNo, rows: chunk.rows, bytes, sent: true };
        } catch (e) {
          csv.destroy();
          // Nothing (or a refused file) reached the network: the chunk is planned again.
          if (e instanceof UploadUrlRefused || isAppError(e)) {
            await pool.query(`update address_book_chunks set state = 'planned' where run_id = $1 and chunk_no = $2`, [input.runId, input.chunkNo]);
          }
          if (e instanceof UploadUrlRefused) {
            if (urlAttempt < 3) {
              deps.logger.warn({ runId: input.runId, chunkNo: input.chunkNo }, `${e.message}; requesting a new upload URL`);
              continue;
            }
            throw new UpstreamRejectedError(`${e.message} (three upload URLs in a row were refused)`);
          }
          throw e;
        }
      }
    },

    /**
     * Checks the result. When the expected count was reached and the settings allow, the listing's total is the
     * proof; otherwise the whole listing is staged again and every row of the delta checked: an addition missing (or
     * listed with another customerRef) and a removal still listed become rejected rows with their reason.
     */
    async abVerify(input: { runId: string; vaspDid: string; countReached: boolean; verify: 'count' | 'listing' }): Promise<{
      verifiedBy: 'count' | 'listing';
      networkAfter: number;
      missing: number;
      stillListed: number;
    }> {
      await setPhase(input.runId, 'verifying');
      if (input.countReached && input.verify === 'count') {
        const networkAfter = await networkTotal(network, input.vaspDid);
        await pool.query('update address_book_runs set network_after = $2 where run_id = $1', [input.runId, networkAfter]);
        return { verifiedBy: 'count', networkAfter, missing: 0, stillListed: 0 };
      }
      const listed = await listInto(input.runId, input.vaspDid, 'after');
      const delta = partition('address_book_delta', input.runId);
      const listing = partition('address_book_listing', input.runId);
      return withHeartbeat('verify', () => tx(pool, async (c) => {
        // Rows already rejected (by registerCustomer or a refused deletion) keep their first reason.
        const { rows: missing } = await c.query<{ address: string; asset: string; customer_ref: string; listed_ref: string | null }>(
          `select d.address, d.asset, d.customer_ref, l.customer_ref as listed_ref
             from ${delta} d left join ${listing} l on l.kind = 'after' and l.address = d.address
            where d.action = 'add' and (l.address is null or l.customer_ref is distinct from d.customer_ref)
              and not exists (select 1 from address_book_rejections x where x.run_id = $1 and x.address = d.address)`,
          [input.runId],
        );
        const { rows: still } = await c.query<{ address: string }>(
          `select d.address from ${delta} d join ${listing} l on l.kind = 'after' and l.address = d.address
            where d.action = 'remove'
              and not exists (select 1 from address_book_rejections x where x.run_id = $1 and x.address = d.address)`,
          [input.runId],
        );
        await reject(c, input.runId, [
          ...missing.map((m) => ({
            action: 'add' as const, address: m.address, asset: m.asset, customerRef: m.customer_ref,
            reason: m.listed_ref === null
              ? 'not in the network\'s listing after processing (the network reports per-row outcomes only by e-mail)'
              : `listed with customerRef "${m.listed_ref}" after processing`,
          })),
          ...still.map((m) => ({ action: 'remove' as const, address: m.address, reason: 'still in the network\'s listing after deletion' })),
        ]);
        return { verifiedBy: 'listing' as const, networkAfter: listed.total, missing: missing.length, stillListed: still.length };
      }));
    },

    /** Stores the run's report, releases the VASP's run lock and drops the run's staging. */
    async abFinishRun(input: {
      runId: string;
      status: 'succeeded' | 'failed';
      error?: string;
      verifiedBy?: 'count' | 'listing';
      phases: Partial<Record<ReconcilePhase, number>>;
    }): Promise<ReconcileReport> {
      const r = await run(input.runId);
      if (r.status !== 'running') {
        const { rows } = await pool.query<{ report: ReconcileReport | null }>('select report from address_book_runs where run_id = $1', [input.runId]);
        if (rows[0]?.report) return rows[0].report;
      }
      const { rows: extra } = await pool.query<{ chunks: string; uploaded: string; trigger: ReconcileTrigger; started_at: Date; now: Date }>(
        `select (select count(*) from address_book_chunks where run_id = $1) as chunks,
                (select count(*) from address_book_chunks where run_id = $1 and state = 'uploaded') as uploaded,
                trigger, started_at, clock_timestamp() as now from address_book_runs where run_id = $1`,
        [input.runId],
      );
      const x = extra[0]!;
      const rejected = Number(r.rejected);
      const toAdd = Number(r.to_add ?? 0);
      const toUpdate = Number(r.to_update ?? 0);
      const toRemove = Number(r.to_remove ?? 0);
      const { rows: rejectedBy } = await pool.query<{ adds: string; removes: string }>(
        `select count(*) filter (where action = 'add') as adds, count(*) filter (where action = 'remove') as removes
           from address_book_rejections where run_id = $1`,
        [input.runId],
      );
      const ok = input.status === 'succeeded';
      const rejectedAdds = Number(rejectedBy[0]!.adds);
      const rejectedRemoves = Number(rejectedBy[0]!.removes);
      const report: ReconcileReport = {
        runId: r.run_id,
        vaspDid: r.vasp_did,
        trigger: x.trigger,
        status: input.status,
        startedAt: x.started_at.toISOString(),
        finishedAt: x.now.toISOString(),
        durationMs: x.now.getTime() - x.started_at.getTime(),
        mode: r.mode,
        method: r.method ?? undefined,
        desired: r.desired === null ? undefined : Number(r.desired),
        networkBefore: r.network_before === null ? undefined : Number(r.network_before),
        networkAfter: r.network_after === null ? undefined : Number(r.network_after),
        // What was added, updated and removed, net of the rows the network refused or did not take.
        added: ok ? Math.max(0, toAdd - rejectedAdds) : 0,
        updated: ok ? toUpdate : 0,
        removed: ok ? Math.max(0, toRemove - rejectedRemoves) : 0,
        rejected,
        chunks: Number(x.chunks),
        verifiedBy: input.verifiedBy,
        phases: input.phases,
        error: input.error,
      };
      await withHeartbeat('result', () => tx(pool, async (c) => {
        if (ok) await keepResult(c, r);
        else await forgetResult(c, r);
        // The run ends now, keeping the result included.
        const { rows: end } = await c.query<{ now: Date }>('select clock_timestamp() as now');
        report.finishedAt = end[0]!.now.toISOString();
        report.durationMs = end[0]!.now.getTime() - x.started_at.getTime();
        report.phases = { ...report.phases, reporting: end[0]!.now.getTime() - x.now.getTime() };
        await c.query(
          `update address_book_runs set status = $2, phase = $3, finished_at = $6, report = $4, error = $5 where run_id = $1`,
          [input.runId, input.status, ok ? 'done' : 'failed', JSON.stringify(report), input.error ?? null, end[0]!.now],
        );
      }));
      for (const table of ['address_book_listing', 'address_book_delta'] as const) {
        await pool.query(`drop table if exists ${partition(table, input.runId)}`);
      }
      return report;
    },
  };
}
