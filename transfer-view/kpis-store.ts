import type { Pool } from 'pg';
import { ANSWER_STATUSES } from './store';

/** Which transfers the KPIs count: created in [from, to), optionally of one group VASP and one direction. */
export interface KpiFilter {
  from: Date;
  to: Date;
  subsidiaryDid?: string;
  direction?: 'incoming' | 'outgoing';
}

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
  /** Per UTC day of the range, the same counts and rates (the console's charts). */
  series: ({ day: string } & KpiCounts & KpiRates)[];
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

const COUNTS = `count(*)::int as total,
  count(transaction_id)::int as sent,
  count(answered_at)::int as answered,
  count(*) filter (where status = 'ACCEPTED')::int as accepted,
  count(counterparty_did)::int as identified,
  count(decided_by)::int as decided,
  count(*) filter (where decided_by = 'system')::int as automated`;

/**
 * The compliance KPIs over the transfer projection (definitions: README, "Compliance KPIs", and GET /v1/kpis). Each
 * query is an index-only scan of the range over migration 0020's covering indexes.
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
  const [totals, byStatus, byType, series] = await Promise.all([
    pool.query<KpiCounts & { median: number | null; p95: number | null }>(
      `select ${COUNTS},
         percentile_cont(0.5) within group (order by extract(epoch from answered_at - created_at))::float8 as median,
         percentile_cont(0.95) within group (order by extract(epoch from answered_at - created_at))::float8 as p95
       from transfer_view ${w}`,
      params,
    ),
    pool.query<{ key: string; n: number }>(
      `select status as key, count(*)::int as n from transfer_view ${w} group by status`,
      params,
    ),
    pool.query<{ key: string | null; n: number }>(
      `select asset as key, count(*)::int as n from transfer_view ${w} group by asset`,
      params,
    ),
    pool.query<KpiCounts & { day: string }>(
      `select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, ${COUNTS}
       from transfer_view ${w} group by 1 order by 1`,
      params,
    ),
  ]);
  const { median, p95, ...counts } = totals.rows[0]!;
  return {
    ...ratesOf(counts),
    counts,
    answerSeconds: { median, p95 },
    byStatus: Object.fromEntries(byStatus.rows.map((r) => [r.key, r.n])),
    byType: Object.fromEntries(byType.rows.map((r) => [r.key ?? 'unknown', r.n])),
    series: series.rows.map((r) => ({ ...r, ...ratesOf(r) })),
  };
}

/** The statuses that count as an answer (the response rate's numerator), as the projection records them. */
export const KPI_ANSWER_STATUSES = ANSWER_STATUSES;
