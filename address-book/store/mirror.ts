/**
 * The mirror: what the network holds for a VASP after its last verified run (address_book_mirror, one partition per
 * run, and address_book_state pointing at it with the registry watermark it reflects). An incremental run starts from
 * it instead of listing the network.
 */
import type { Pool, PoolClient } from 'pg';
import { getRun, type RunRow } from './runs';
import { partition, runIdLiteral } from './staging';
import { REGISTRY_LOCK } from './registry';
import { withTransaction } from '../../db/transaction';

/** The VASP's last verified result: the network's count then, its distinct addresses, and how many its mirror holds now. */
export async function mirrorState(
  db: Pick<Pool | PoolClient, 'query'>,
  vaspDid: string,
): Promise<{ networkRows: number; distinctRows: number; mirrored: number } | undefined> {
  const { rows } = await db.query<{ network_rows: string; distinct_rows: string; mirror: string }>(
    `select network_rows, distinct_rows, (select count(*) from address_book_mirror m where m.run_id = s.mirror_run_id) as mirror
       from address_book_state s where vasp_did = $1`,
    [vaspDid],
  );
  const st = rows[0];
  return (
    st && { networkRows: Number(st.network_rows), distinctRows: Number(st.distinct_rows), mirrored: Number(st.mirror) }
  );
}

async function createMirrorPartition(c: PoolClient, runId: string): Promise<string> {
  const part = partition('address_book_mirror', runId);
  await c.query(`drop table if exists ${part}`);
  await c.query(
    `create unlogged table ${part} partition of address_book_mirror for values in (${runIdLiteral(runId)})`,
  );
  return part;
}

/**
 * A full run's mirror, built in a partition of its own from the run's starting listing and delta (what the network
 * will hold once everything is processed), while the uploads are under way. Idempotent.
 */
async function buildMirror(c: PoolClient, r: RunRow): Promise<void> {
  const listing = partition('address_book_listing', r.run_id);
  const delta = partition('address_book_delta', r.run_id);
  const part = await createMirrorPartition(c, r.run_id);
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
 * Builds a running full run's mirror once: a run lock serialises a retry with an attempt still running, and a run that
 * ended meanwhile (failed while this was queued) keeps no mirror.
 */
export async function buildRunMirror(pool: Pool, r: RunRow): Promise<void> {
  await withTransaction(pool, async (c) => {
    await c.query('select pg_advisory_xact_lock($1, hashtext($2))', [REGISTRY_LOCK % 2 ** 31, r.run_id]);
    const again = await c.query<{ mirror_built: boolean; status: string }>(
      'select mirror_built, status from address_book_runs where run_id = $1',
      [r.run_id],
    );
    if (again.rows[0]?.status === 'running' && !again.rows[0].mirror_built) await buildMirror(c, r);
  });
}

/**
 * Keeps what the network now holds as the mirror for the next incremental run, with the registry's watermark the
 * run reflects. A run verified by the whole listing takes that listing. Otherwise a full run takes the mirror it
 * built, an incremental run applies its delta to the current one; either way rows the network refused keep what
 * the network had before. Tombstones up to the watermark are no longer needed.
 */
export async function keepResult(c: PoolClient, r: RunRow): Promise<void> {
  const listing = partition('address_book_listing', r.run_id);
  const delta = partition('address_book_delta', r.run_id);
  const { rows: st } = await c.query<{ mirror_run_id: string }>(
    'select mirror_run_id from address_book_state where vasp_did = $1',
    [r.vasp_did],
  );
  const previous = st[0]?.mirror_run_id;
  // An incremental run whose mirror vanished meanwhile (a failed run of the VASP in between) leaves none either.
  if (r.mode === 'incremental' && !previous) return forgetResult(c, r);
  const after = await c.query(`select 1 from ${listing} where kind = 'after' limit 1`);
  let mirrorRun: string;
  if (after.rowCount) {
    mirrorRun = r.run_id;
    const part = await createMirrorPartition(c, r.run_id);
    await c.query(
      `insert into ${part} (run_id, address, customer_ref, n) select $1, address, customer_ref, n from ${listing} where kind = 'after'`,
      [r.run_id],
    );
  } else {
    if (r.mode === 'full') {
      if (!r.mirror_built) await buildMirror(c, r);
      mirrorRun = r.run_id;
    } else {
      mirrorRun = previous!;
      const part = partition('address_book_mirror', mirrorRun);
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
    const part = partition('address_book_mirror', mirrorRun);
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
  const fresh = await getRun(c, r.run_id);
  await c.query(
    `insert into address_book_state (vasp_did, run_id, mirror_run_id, watermark, network_rows, distinct_rows)
     values ($1, $2, $3, $4, $5, (select count(*) from address_book_mirror where run_id = $3))
     on conflict (vasp_did) do update set run_id = excluded.run_id, mirror_run_id = excluded.mirror_run_id,
       watermark = excluded.watermark, network_rows = excluded.network_rows, distinct_rows = excluded.distinct_rows,
       updated_at = now()`,
    [r.vasp_did, r.run_id, mirrorRun, fresh.watermark ?? 0, fresh.network_after ?? 0],
  );
  if (previous && previous !== mirrorRun)
    await c.query(`drop table if exists ${partition('address_book_mirror', previous)}`);
  await c.query('delete from address_registry_removed where vasp_did = $1 and change_seq <= $2', [
    r.vasp_did,
    fresh.watermark ?? 0,
  ]);
}

/** After a failed run nobody knows what the network took: no mirror, so the next run lists it all. */
export async function forgetResult(c: PoolClient, r: Pick<RunRow, 'run_id' | 'vasp_did'>): Promise<void> {
  const { rows: st } = await c.query<{ mirror_run_id: string }>(
    'delete from address_book_state where vasp_did = $1 returning mirror_run_id',
    [r.vasp_did],
  );
  for (const id of new Set([r.run_id, ...st.map((x) => x.mirror_run_id)]))
    await c.query(`drop table if exists ${partition('address_book_mirror', id)}`);
}
