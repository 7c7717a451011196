import type { Pool } from 'pg';
import { withTransaction } from '../db/transaction';
import { ANSWER_STATUSES } from './store';

/** Which transfers the KPIs count: created in [from, to), optionally of one group VASP and one direction. */
export interface KpiFilter {
  from: Date;
  to: Date;
  subsidiaryDid?: string;
  direction?: 'incoming' | 'outgoing';
  /** The series' buckets: UTC days (default) or hours. */
  bucket?: KpiBucket;
}

export type KpiBucket = 'day' | 'hour';

/** The counts each rate is made of, for a whole range or one day of it. */
export interface KpiCounts {
  total: number;
  sent: number;
  answered: number;
  accepted: number;
  identified: number;
  decided: number;
  automated: number;
}

export interface KpiRates {
  /** answered ÷ sent */
  responseRate: number | null;
  /** accepted ÷ total */
  successRate: number | null;
  /** identified ÷ total */
  identificationRate: number | null;
  /** automated ÷ decided */
  automationRate: number | null;
}

export interface Kpis extends KpiRates {
  counts: KpiCounts;
  /** `estimated`: from the answer-time histograms (more than EXACT_PERCENTILES_UP_TO answered), else exact. */
  answerSeconds: { median: number | null; p95: number | null; estimated: boolean };
  byStatus: Record<string, number>;
  byType: Record<string, number>;
  /**
   * Per UTC day (or hour) of the range that has transfers, oldest first, the same counts and rates (the console's
   * charts): `start` is the bucket's first instant, `day` its UTC date.
   */
  series: ({ start: string; day: string } & KpiCounts & KpiRates)[];
}

const ratio = (n: number, d: number) => (d === 0 ? null : n / d);

export function ratesOf(c: KpiCounts): KpiRates {
  return {
    responseRate: ratio(c.answered, c.sent),
    successRate: ratio(c.accepted, c.total),
    identificationRate: ratio(c.identified, c.total),
    automationRate: ratio(c.automated, c.decided),
  };
}

/** Above this many answered transfers in the range, the answer time's percentiles are estimated from histograms. */
export const EXACT_PERCENTILES_UP_TO = 5000;

const DAY_MS = 86_400_000;
/** The counts of a transfer_kpis row (migration 0022), in its column order. */
const SUMS: (keyof KpiCounts)[] = ['total', 'sent', 'answered', 'accepted', 'identified', 'decided', 'automated'];
const FOLD_LOCK = 'transfer_kpi_changes fold';

/**
 * Adds the changes the triggers on transfer_view appended (migration 0022) into transfer_kpis, in one transaction, by
 * one caller at a time (the others skip: what is not folded yet is read from the changes table as well).
 */
export async function foldKpiChanges(pool: Pool): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>(
      'select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as locked',
      [FOLD_LOCK],
    );
    if (!rows[0]?.locked) return;
    // The kind 4 changes (a row per answer-time bucket) go into the kind 5 rows' arrays (migration 0025).
    await tx.query(
      `with moved as (delete from transfer_kpi_changes returning *),
       counts as (
         insert into transfer_kpis (kind, bucket, subsidiary_did, direction, key, ${SUMS.join(', ')})
         select kind, bucket, subsidiary_did, direction, key, ${SUMS.map((c) => `sum(${c})`).join(', ')}
           from moved where kind <> 4 group by 1, 2, 3, 4, 5
         on conflict (kind, bucket, subsidiary_did, direction, key) do update set
           ${SUMS.map((c) => `${c} = transfer_kpis.${c} + excluded.${c}`).join(', ')})
       insert into transfer_kpis
       select 5, bucket, subsidiary_did, direction, '', ${SUMS.map((c) => `sum(${c})`).join(', ')},
              transfer_kpi_histogram(array_agg(key::int), array_agg(total))
         from moved where kind = 4 group by bucket, subsidiary_did, direction
       on conflict (kind, bucket, subsidiary_did, direction, key) do update set
         ${SUMS.map((c) => `${c} = transfer_kpis.${c} + excluded.${c}`).join(', ')},
         answer_counts = transfer_kpi_histogram_add(transfer_kpis.answer_counts, excluded.answer_counts)`,
    );
  });
}

interface KeyRow extends KpiCounts {
  kind: number;
  start: Date;
  key: string | null;
}

/**
 * The compliance KPIs over the transfer projection (definitions: README, "Compliance KPIs", and GET /v1/kpis). The
 * range's whole UTC days are read from the counts migration 0022's triggers keep (transfer_kpis and the changes not
 * folded into it yet); its partial days at either end are counted from transfer_view's rows over migration 0020's
 * covering index, with the same keys, in the same statement, so the counts are exact for any range. The answer time's
 * percentiles are exact (over the answered rows) up to EXACT_PERCENTILES_UP_TO answered transfers, and estimated from
 * the per-day answer-time histograms above.
 */
export async function computeKpis(pool: Pool, f: KpiFilter & { exactPercentilesUpTo?: number }): Promise<Kpis> {
  await foldKpiChanges(pool);
  const seriesKind = f.bucket === 'hour' ? 3 : 1;
  const groups = await keyedCounts(pool, f, [1, 2, ...(seriesKind === 3 ? [3] : [])]);
  const zero = (): KpiCounts => ({
    total: 0,
    sent: 0,
    answered: 0,
    accepted: 0,
    identified: 0,
    decided: 0,
    automated: 0,
  });
  const counts = zero();
  const byStatus: Record<string, number> = {};
  const byType: Record<string, number> = {};
  const buckets = new Map<number, KpiCounts>();
  const add = (c: KpiCounts, g: KpiCounts) => {
    for (const k of Object.keys(c) as (keyof KpiCounts)[]) c[k] += g[k];
  };
  for (const g of groups) {
    if (g.total === 0) continue;
    if (g.kind === 1) {
      add(counts, g);
      byStatus[g.key!] = (byStatus[g.key!] ?? 0) + g.total;
    }
    if (g.kind === 2) byType[g.key ?? 'unknown'] = (byType[g.key ?? 'unknown'] ?? 0) + g.total;
    if (g.kind === seriesKind) {
      const at = g.start.getTime();
      const bucket = buckets.get(at) ?? zero();
      buckets.set(at, bucket);
      add(bucket, g);
    }
  }
  for (const [at, c] of buckets) if (c.total === 0) buckets.delete(at);
  const estimated = counts.answered > (f.exactPercentilesUpTo ?? EXACT_PERCENTILES_UP_TO);
  const [median = null, p95 = null] = estimated
    ? estimatePercentiles(await answerHistogram(pool, f), [0.5, 0.95])
    : await exactPercentiles(pool, f);
  return {
    ...ratesOf(counts),
    counts,
    answerSeconds: { median, p95, estimated },
    byStatus,
    byType,
    series: [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([at, c]) => {
        const start = new Date(at).toISOString();
        return { start, day: start.slice(0, 10), ...c, ...ratesOf(c) };
      }),
  };
}

/** The filter's conditions on subsidiary and direction (columns of `alias` when given), numbered after `params`. */
function filterSql(f: KpiFilter, params: unknown[], alias = ''): string {
  let sql = '';
  if (f.subsidiaryDid) {
    params.push(f.subsidiaryDid);
    sql += ` and ${alias}subsidiary_did = $${params.length}`;
  }
  if (f.direction) {
    params.push(f.direction);
    sql += ` and ${alias}direction = $${params.length}`;
  }
  return sql;
}

/**
 * The range's whole UTC days, [days0, days1), read from the rollup; the SQL of the rest of [from, to) counted from
 * transfer_view's rows with migration 0022's keys of `kinds` ($1), or '' when the range has no partial day (planning
 * that part costs more than running the rest). Appends its parameters to `params`, whose $1 is the kinds.
 */
function rangeSql(f: KpiFilter, params: unknown[]): { days: string; edges: string } {
  const firstDay = Math.ceil(f.from.getTime() / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(f.to.getTime() / DAY_MS) * DAY_MS;
  const [days0, days1] = firstDay < lastDay ? [new Date(firstDay), new Date(lastDay)] : [f.to, f.to];
  params.push(days0, days1);
  const [d0, d1] = [`$${params.length - 1}`, `$${params.length}`];
  const days = `bucket >= ${d0} and bucket < ${d1}${filterSql(f, params)}`;
  if (f.from.getTime() >= days0.getTime() && days1.getTime() >= f.to.getTime()) return { days, edges: '' };
  params.push(f.from, f.to);
  const [from, to] = [`$${params.length - 1}`, `$${params.length}`];
  const rowFilters = filterSql(f, params, 't.');
  const edges = `select k.kind, k.bucket, k.key, 1 as total, k.sent, k.answered, k.accepted, k.identified, k.decided,
                        k.automated
        from transfer_view t,
             lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did,
                                       t.decided_by, t.answered_at) k
       where ((t.created_at >= ${from} and t.created_at < ${d0}) or (t.created_at >= ${d1} and t.created_at < ${to}))
             ${rowFilters} and k.kind = any($1::smallint[])`;
  return { days, edges };
}

/** Counts per (kind, bucket, key) of migration 0022 over the range: whole days from the rollup, the rest from rows. */
async function keyedCounts(pool: Pool, f: KpiFilter, kinds: number[]): Promise<KeyRow[]> {
  const params: unknown[] = [kinds];
  const { days, edges } = rangeSql(f, params);
  const rollup = (table: string) =>
    `select kind, bucket, key, ${SUMS.join(', ')} from ${table} where kind = any($1::smallint[]) and ${days}`;
  const { rows } = await pool.query<KeyRow>(
    `select kind, bucket as start, key, ${SUMS.map((c) => `sum(${c})::int as ${c}`).join(', ')}
       from (${rollup('transfer_kpis')} union all ${rollup('transfer_kpi_changes')}
             ${edges && `union all ${edges}`}) c
      group by 1, 2, 3`,
    params,
  );
  return rows;
}

/**
 * The range's answer-time histogram: answered transfers per bucket of transfer_kpi_answer_bucket (`key`), from the
 * rollup's kind 5 arrays (migration 0025), added up here (cheaper than unnesting them in SQL), and the kind 4 rows of
 * the changes not folded into them yet and of the partial days' transfers.
 */
async function answerHistogram(pool: Pool, f: KpiFilter): Promise<{ key: string; total: number }[]> {
  const params: unknown[] = [[4]];
  const { days, edges } = rangeSql(f, params);
  const { rows } = await pool.query<{ counts: number[] | null; key: string | null; total: number | null }>(
    `select answer_counts as counts, null as key, null::int as total from transfer_kpis where kind = 5 and ${days}
     union all
     select null, key, sum(total)::int from (
       select key, total from transfer_kpi_changes where kind = any($1::smallint[]) and ${days}
       ${edges && `union all select key, total from (${edges}) e`}) c
      group by 2`,
    params,
  );
  const byBucket: number[] = [];
  for (const r of rows) {
    if (r.counts) r.counts.forEach((n, i) => (byBucket[i] = (byBucket[i] ?? 0) + n));
    else byBucket[Number(r.key)] = (byBucket[Number(r.key)] ?? 0) + r.total!;
  }
  return byBucket.flatMap((total, i) => (total ? [{ key: String(i), total }] : []));
}

/** percentile_cont over the answered transfers of the range. */
async function exactPercentiles(pool: Pool, f: KpiFilter): Promise<(number | null)[]> {
  const params: unknown[] = [f.from, f.to];
  const filters = filterSql(f, params);
  const { rows } = await pool.query<{ p: (number | null)[] | null }>(
    `select percentile_cont(array[0.5, 0.95]::float8[]) within group (order by extract(epoch from answered_at - created_at)::float8) as p
       from transfer_view where created_at >= $1 and created_at < $2${filters} and answered_at is not null`,
    params,
  );
  return rows[0]?.p ?? [];
}

/** Bucket i of transfer_kpi_answer_bucket (migration 0022): [0, 1) s for 0, [2^((i-1)/4), 2^(i/4)) s above. */
const bucketBounds = (i: number): [number, number] => (i === 0 ? [0, 1] : [2 ** ((i - 1) / 4), 2 ** (i / 4)]);

/**
 * percentile_cont's answer estimated from the answer-time histogram (kind 4 rows): the rank's position within its
 * bucket, interpolated geometrically between the bucket's bounds (linearly in bucket 0).
 */
export function estimatePercentiles(rows: Pick<KeyRow, 'key' | 'total'>[], ps: number[]): (number | null)[] {
  const byBucket = new Map<number, number>();
  for (const r of rows) byBucket.set(Number(r.key), (byBucket.get(Number(r.key)) ?? 0) + r.total);
  const hist = [...byBucket.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const n = hist.reduce((s, [, c]) => s + c, 0);
  return ps.map((p) => {
    if (n === 0) return null;
    const rank = p * (n - 1);
    let before = 0;
    for (const [i, c] of hist) {
      if (rank < before + c) {
        const within = (rank - before + 0.5) / c;
        const [lo, hi] = bucketBounds(i);
        return i === 0 ? lo + (hi - lo) * within : lo * (hi / lo) ** within;
      }
      before += c;
    }
    return bucketBounds(hist[hist.length - 1]![0])[1];
  });
}

/** The statuses that count as an answer (the response rate's numerator), as the projection records them. */
export const KPI_ANSWER_STATUSES = ANSWER_STATUSES;
