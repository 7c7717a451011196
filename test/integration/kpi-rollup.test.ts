/**
 * The KPIs' rollup (migration 0022: transfer_kpis, kept by triggers on transfer_view) stays exactly what counting the
 * rows says, through concurrent writes as the workflows make them (status changes, decisions, first answers, retried
 * writes), multi-row updates, deletes and folds running meanwhile; and GET /v1/kpis's store answers a range that is not
 * aligned on days or hours exactly as the per-row count does. In a database of its own: the test compares whole tables.
 */
import type { Pool } from 'pg';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { computeKpis, estimatePercentiles, foldKpiChanges, type KpiFilter } from '../../transfer-view/kpis-store';
import { writeTransferViewUpdate } from '../../transfer-view/store';
import type { TransferViewUpdate } from '../../transfer-view/types';
import { ownDatabase } from '../harness/platform';

const DAY = 86_400_000;
const SUBS = ['did:ethr:0xsub1', 'did:ethr:0xsub2'];
const CP = 'did:ethr:0x00000000000000000000000000000000000000c1';

describe('KPI rollup (migrations 0022 and 0025)', () => {
  const db = ownDatabase('kpi_rollup');
  let pool: Pool;
  const day0 = Date.UTC(2024, 2, 10);

  beforeAll(async () => {
    await db.create();
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator', { max: 12 });
  });
  afterAll(async () => {
    await pool?.end();
    await db.drop();
  });

  /**
   * Every key's counts from the rows themselves, and from the rollup with its unfolded changes: they must be equal. The
   * answer-time histogram twice: its day's counts (kind 5, the kind 4 keys summed per day, subsidiary and direction;
   * migration 0025) and the transfers in each of its buckets (the kind 5 arrays' elements, as `kind 4 … bucket n`).
   */
  async function rollupAgainstRows(): Promise<{ fromRows: string[]; fromRollup: string[] }> {
    const sums =
      'sum(total)::int, sum(sent)::int, sum(answered)::int, sum(accepted)::int, sum(identified)::int, sum(decided)::int, sum(automated)::int';
    const cols = 'bucket, subsidiary_did, direction, total, sent, answered, accepted, identified, decided, automated';
    const key = `kind || ' ' || bucket || ' ' || coalesce(subsidiary_did, '-') || ' ' || direction || ' ' || coalesce(key, '-')`;
    const keyRows = `select k.kind, k.key, t.subsidiary_did, t.direction, k.bucket, 1 as total, k.sent, k.answered,
                            k.accepted, k.identified, k.decided, k.automated
                       from transfer_view t, lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id,
                                                                       t.counterparty_did, t.decided_by, t.answered_at) k`;
    const { rows: fromRows } = await pool.query<{ k: string }>(
      `select ${key} || ' ' || row(${sums})::text as k from (
         select case kind when 4 then 5 else kind end as kind, case kind when 4 then '' else key end as key, ${cols}
           from (${keyRows}) r) r
        group by kind, bucket, subsidiary_did, direction, key
       union all
       select ${key} || ' bucket ' || sum(total)::int from (${keyRows}) r where kind = 4
        group by kind, bucket, subsidiary_did, direction, key order by 1`,
    );
    const { rows: fromRollup } = await pool.query<{ k: string }>(
      `select ${key} || ' ' || row(${sums})::text as k from (
         select kind, key, ${cols} from transfer_kpis
         union all
         select case kind when 4 then 5 else kind end, case kind when 4 then '' else key end, ${cols}
           from transfer_kpi_changes) r
        group by kind, bucket, subsidiary_did, direction, key having sum(total) <> 0
       union all
       select ${key} || ' bucket ' || sum(total)::int from (
         select 4 as kind, (u.i - 1)::text as key, bucket, subsidiary_did, direction, u.n as total
           from transfer_kpis, unnest(answer_counts) with ordinality u (n, i) where kind = 5
         union all
         select kind, key, bucket, subsidiary_did, direction, total from transfer_kpi_changes where kind = 4) r
        group by kind, bucket, subsidiary_did, direction, key having sum(total) <> 0 order by 1`,
    );
    return { fromRows: fromRows.map((r) => r.k), fromRollup: fromRollup.map((r) => r.k) };
  }

  /** The KPIs' counts as the store computed them before 0022: one group-by over the range's rows. */
  async function perRow(f: KpiFilter) {
    const params: unknown[] = [f.from, f.to];
    let where = 'created_at >= $1 and created_at < $2';
    if (f.subsidiaryDid) where += ` and subsidiary_did = $${params.push(f.subsidiaryDid)}`;
    if (f.direction) where += ` and direction = $${params.push(f.direction)}`;
    const trunc = f.bucket === 'hour' ? 'hour' : 'day';
    const q = (select: string, group: string) =>
      pool.query(`select ${select} from transfer_view where ${where} ${group}`, params).then((r) => r.rows);
    const counts = `count(*)::int as total, count(transaction_id)::int as sent, count(answered_at)::int as answered,
      count(*) filter (where status = 'ACCEPTED')::int as accepted, count(counterparty_did)::int as identified,
      count(decided_by)::int as decided, count(*) filter (where decided_by = 'system')::int as automated`;
    const [totals] = await q(counts, '');
    const byStatus = Object.fromEntries(
      (await q('status, count(*)::int as n', 'group by 1')).map((r) => [r.status, r.n]),
    );
    const byType = Object.fromEntries(
      (await q(`coalesce(asset, 'unknown') as a, count(*)::int as n`, 'group by 1')).map((r) => [r.a, r.n]),
    );
    const series = (
      await q(
        `date_trunc('${trunc}', created_at at time zone 'UTC') at time zone 'UTC' as start, ${counts}`,
        'group by 1 order by 1',
      )
    ).map(({ start, ...c }) => ({ start: (start as Date).toISOString(), ...c }));
    const [{ p }] = await q(
      `percentile_cont(array[0.5, 0.95]::float8[]) within group (order by extract(epoch from answered_at - created_at)::float8) as p`,
      'and answered_at is not null',
    );
    return { totals, byStatus, byType, series, p: p as number[] | null, where, params };
  }

  async function expectSameAsRows(f: KpiFilter) {
    const k = await computeKpis(pool, f);
    const want = await perRow(f);
    expect(k.counts).toEqual(want.totals);
    expect(k.byStatus).toEqual(want.byStatus);
    expect(k.byType).toEqual(want.byType);
    expect(
      k.series.map(({ start, total, sent, answered, accepted, identified, decided, automated }) => ({
        start,
        total,
        sent,
        answered,
        accepted,
        identified,
        decided,
        automated,
      })),
    ).toEqual(want.series);
    expect(k.answerSeconds.estimated).toBe(false);
    expect([k.answerSeconds.median, k.answerSeconds.p95]).toEqual(want.p ?? [null, null]);
    // Estimated from the histograms: within the bucket's width (2^(1/4)) of the exact figure.
    const e = await computeKpis(pool, { ...f, exactPercentilesUpTo: 0 });
    expect(e.counts).toEqual(k.counts);
    if (want.p && want.totals.answered > 0) {
      expect(e.answerSeconds.estimated).toBe(true);
      const pairs: [number, number][] = [
        [e.answerSeconds.median!, want.p[0]!],
        [e.answerSeconds.p95!, want.p[1]!],
      ];
      for (const [got, exact] of pairs) {
        expect(got / exact).toBeGreaterThan(2 ** -0.25 - 1e-9);
        expect(got / exact).toBeLessThan(2 ** 0.25 + 1e-9);
      }
      // The same estimate as the rows' own histogram gives (the buckets as 0022 counted them, one row each).
      const { rows: hist } = await pool.query<{ key: string; total: number }>(
        `select transfer_kpi_answer_bucket(extract(epoch from answered_at - created_at)::float8)::text as key,
                count(*)::int as total
           from transfer_view where ${want.where} and answered_at is not null group by 1`,
        want.params,
      );
      expect([e.answerSeconds.median, e.answerSeconds.p95]).toEqual(estimatePercentiles(hist, [0.5, 0.95]));
    }
    return k;
  }

  it('stays exact through concurrent status changes, answers, deletes and folds, for ranges not aligned on hours', async () => {
    const N = 240;
    const rnd = (i: number, salt: number) => Math.abs(Math.sin(i * 12.9898 + salt * 78.233) * 43758.5453) % 1;
    const base = (i: number): TransferViewUpdate => ({
      workflowId: `rollup-${i}`,
      id: `rollup-${i}`,
      direction: i % 2 ? 'incoming' : 'outgoing',
      status: 'RECEIVED',
      final: false,
      needsReview: false,
      needsRouting: false,
      escalated: false,
      subsidiaryDid: i % 7 === 0 ? undefined : SUBS[i % 2 === 0 ? 0 : Math.floor(rnd(i, 1) * 2)],
      asset: i % 11 === 0 ? undefined : ['ETH', 'BTC', 'USDC'][i % 3],
      createdAt: new Date(day0 + Math.floor(rnd(i, 2) * 3 * DAY)).toISOString(),
      version: 1,
    });
    // Each transfer's successive writes as a workflow makes them, each written twice (a retried activity); the
    // transfers run 24 at a time, with folds (a KPI reader) running meanwhile.
    const steps = (i: number): Partial<TransferViewUpdate>[] => {
      const sys = i % 5 ? { decidedBy: 'system' as const, decisionAction: 'APPROVE' } : {};
      const sent = { transactionId: `tx-${i}`, status: 'SENT', ...sys };
      const end = ['ACCEPTED', 'DECLINED', 'REJECTED', 'CANCELLED', 'SENT'][Math.floor(rnd(i, 3) * 5)]!;
      return [
        {},
        { status: 'PREPARED', ...sys },
        sent,
        { ...sent, counterpartyDid: i % 4 ? CP : undefined, status: end, final: end !== 'SENT' },
      ];
    };
    let folding = true;
    const folds = (async () => {
      while (folding) {
        await foldKpiChanges(pool);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    for (let at = 0; at < N; at += 24) {
      await Promise.all(
        Array.from({ length: Math.min(24, N - at) }, async (_, j) => {
          const i = at + j;
          let version = 0;
          for (const step of steps(i)) {
            const u = { ...base(i), ...step, version: ++version };
            await writeTransferViewUpdate(pool, u);
            await writeTransferViewUpdate(pool, u);
          }
        }),
      );
    }
    folding = false;
    await folds;
    expect((await pool.query('select count(*)::int as n from transfer_view')).rows[0].n).toBe(N);
    let { fromRows, fromRollup } = await rollupAgainstRows();
    expect(fromRollup).toEqual(fromRows);

    // Answer times a workflow would not write (now() is years after these creations): one multi-row update, then a
    // status change of many rows at once, then deletes; checked against the rows after each, folded or not.
    await pool.query(
      `update transfer_view set answered_at = created_at + (1 + (hashtext(workflow_id) & 65535) % 7200) * interval '1 second'
        where answered_at is not null`,
    );
    await pool.query(
      `update transfer_view set status = 'ACCEPTED' where status = 'DECLINED' and direction = 'incoming'`,
    );
    ({ fromRows, fromRollup } = await rollupAgainstRows());
    expect(fromRollup).toEqual(fromRows);
    await foldKpiChanges(pool);
    expect((await pool.query('select count(*)::int as n from transfer_kpi_changes')).rows[0].n).toBe(0);
    await pool.query(
      `delete from transfer_view where workflow_id in (select workflow_id from transfer_view order by workflow_id limit 30)`,
    );
    ({ fromRows, fromRollup } = await rollupAgainstRows());
    expect(fromRollup).toEqual(fromRows);

    // Ranges: whole days, days with partial hours at both ends, within one day, and one filtered hourly.
    const from = new Date(day0 + 5 * 3_600_000 + 17 * 60_000 + 3_000);
    const to = new Date(day0 + 2 * DAY + 13 * 3_600_000 + 3 * 60_000);
    const whole = await expectSameAsRows({ from: new Date(day0), to: new Date(day0 + 3 * DAY) });
    expect(whole.counts.total).toBe(N - 30);
    const partial = await expectSameAsRows({ from, to });
    expect(partial.counts.total).toBeLessThan(whole.counts.total);
    expect(partial.counts.total).toBeGreaterThan(0);
    await expectSameAsRows({ from, to: new Date(from.getTime() + 9 * 3_600_000) });
    await expectSameAsRows({ from, to, bucket: 'hour', subsidiaryDid: SUBS[0], direction: 'outgoing' });
    await expectSameAsRows({ from, to, direction: 'incoming' });
  });
});
