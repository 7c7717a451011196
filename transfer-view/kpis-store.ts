import type { Pool } from 'pg';
import { withReadOnlyTransaction } from '../db/transaction';
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
  answerSeconds: { median: number | null; p95: number | null };
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

/**
 * The compliance KPIs over the transfer projection (definitions: README, "Compliance KPIs", and GET /v1/kpis), in two
 * index-only scans of the range over migration 0020's covering indexes, run side by side: one counts the transfers per
 * (bucket, status, asset), a few thousand groups at most, which this function adds up into the totals, the statuses,
 * the assets and the series; the other takes the answer times' percentiles over the answered transfers only.
 */
export async function computeKpis(pool: Pool, f: KpiFilter): Promise<Kpis> {
  const params: unknown[] = [f.from, f.to];
  const where = ['created_at >= $1', 'created_at < $2'];
  if (f.subsidiaryDid) {
    params.push(f.subsidiaryDid);
    where.push(`subsidiary_did = $${params.length}`);
  }
  if (f.direction) {
    params.push(f.direction);
    where.push(`direction = $${params.length}`);
  }
  const w = `where ${where.join(' and ')}`;
  const [groups, answers] = await Promise.all([
    withReadOnlyTransaction(pool, (client) =>
      // The planner cannot tell how few groups a range makes (it assumes one per row) and would sort the whole range
      // to group it; with room for its hash table it groups as it scans.
      client.query("set local work_mem = '64MB'").then(() =>
        client.query<Omit<KpiCounts, 'accepted'> & { start: Date; status: string; asset: string | null }>(
          `select date_trunc('${f.bucket === 'hour' ? 'hour' : 'day'}', created_at at time zone 'UTC') at time zone 'UTC' as start,
             status, asset,
             count(*)::int as total,
             count(transaction_id)::int as sent,
             count(answered_at)::int as answered,
             count(counterparty_did)::int as identified,
             count(decided_by)::int as decided,
             count(*) filter (where decided_by = 'system')::int as automated
           from transfer_view ${w} group by 1, 2, 3`,
          params,
        ),
      ),
    ),
    pool.query<{ p: (number | null)[] | null }>(
      `select percentile_cont(array[0.5, 0.95]::float8[]) within group (order by extract(epoch from answered_at - created_at)::float8) as p
       from transfer_view ${w} and answered_at is not null`,
      params,
    ),
  ]);
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
  for (const g of groups.rows) {
    const at = g.start.getTime();
    const bucket = buckets.get(at) ?? zero();
    buckets.set(at, bucket);
    for (const c of [counts, bucket]) {
      c.total += g.total;
      c.sent += g.sent;
      c.answered += g.answered;
      c.accepted += g.status === 'ACCEPTED' ? g.total : 0;
      c.identified += g.identified;
      c.decided += g.decided;
      c.automated += g.automated;
    }
    byStatus[g.status] = (byStatus[g.status] ?? 0) + g.total;
    byType[g.asset ?? 'unknown'] = (byType[g.asset ?? 'unknown'] ?? 0) + g.total;
  }
  const [median = null, p95 = null] = answers.rows[0]?.p ?? [];
  return {
    ...ratesOf(counts),
    counts,
    answerSeconds: { median, p95 },
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

/** The statuses that count as an answer (the response rate's numerator), as the projection records them. */
export const KPI_ANSWER_STATUSES = ANSWER_STATUSES;
