import type { Pool } from 'pg';
import { foldKpiChanges } from './kpis-store';

/**
 * Synthetic transfers for `npm run bench:console-api`: `rows` rows generated inside PostgreSQL (generate_series), with
 * the table's indexes dropped during the insert and rebuilt from their own definitions afterwards, which is several
 * times faster than maintaining them row by row. The distribution is a busy group's year: half each way, 10
 * subsidiaries, 200 counterparties, 8 assets, mostly final, about 0.1 % waiting for a person; decided (90 % without a
 * person) and answered within an hour as the KPIs (GET /v1/kpis) read them.
 */
export async function fillSyntheticTransfers(
  pool: Pool,
  rows: number,
): Promise<{ subsidiaries: string[]; counterparties: string[]; assets: string[]; transactionIds: string[] }> {
  const client = await pool.connect();
  try {
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'transfer_view' and indexname <> 'transfer_view_pkey'`,
    );
    for (const i of indexes) await client.query(`drop index ${i.indexname}`);
    await client.query(
      `
      insert into transfer_view (workflow_id, direction, id, transaction_id, reference, status, phase, final, needs_review, needs_routing,
                                 escalated, subsidiary_did, counterparty_did, asset, amount, hits, deadline_at, created_at, version,
                                 decided_by, decision_action, answered_at)
      select case when incoming then 'incoming-' || txid else 'outgoing-' || ref end,
             case when incoming then 'incoming' else 'outgoing' end,
             case when incoming then txid else ref end,
             txid, ref,
             case when review or routing then case when review then 'ACK' else 'SENT' end
                  when r < 0.85 then 'ACCEPTED' when r < 0.92 then 'DECLINED' when r < 0.95 then 'REJECTED'
                  when r < 0.97 then 'CANCELLED' when r < 0.99 then 'ACK' else 'SENT' end,
             case when not incoming then null when review then 'awaiting-review' when routing then 'awaiting-route'
                  when r < 0.97 then 'completed' else 'awaiting-ack' end,
             not (review or routing) and r < 0.97, review, routing, review and r < 0.5,
             case when routing then null else 'did:ethr:0xsub' || lpad((h1 % 10)::text, 38, '0') end,
             'did:ethr:0xcp' || lpad((h2 % 200)::text, 39, '0'),
             (array['ETH','BTC','USDC','USDT','SOL','XRP','DOT','ADA'])[1 + (h3 % 8)],
             (1 + (n * 7919) % 100000000)::text,
             case when review then '{"nameHits":[{"list":"SDN","entNum":900001,"matchedName":"IVAN PETROV","score":0.93}],"addressHits":[]}'::jsonb end,
             case when review or routing then created + interval '4 hours' end,
             created, 3,
             case when review or routing or r >= 0.97 then null when h3 % 10 = 0 then 'person' else 'system' end,
             case when review or routing or r >= 0.97 then null when r < 0.85 then 'APPROVE' else 'REJECT' end,
             case when review or (not routing and r < 0.95) or (not routing and r >= 0.97 and r < 0.99)
                  then created + ((h2 % 3600) + 1) * interval '1 second' end
        from (
          select n, incoming, r, txid, ref, created, h1, h2, h3,
                 incoming and h1 % 1000 = 7 as review, incoming and h2 % 2000 = 11 as routing
            from (
              select n, n % 2 = 0 as incoming, (abs(hashint8(n + 3)) % 1000) / 1000.0 as r,
                     abs(hashint8(n)::bigint) as h1, abs(hashint8(n + 1)::bigint) as h2, abs(hashint8(n + 2)::bigint) as h3,
                     substr(md5(n::text), 1, 8) || '-' || substr(md5(n::text), 9, 4) || '-4' || substr(md5(n::text), 14, 3) || '-8'
                       || substr(md5(n::text), 18, 3) || '-' || substr(md5(n::text), 21, 12) as txid,
                     'ref-' || n as ref,
                     timestamptz '2025-11-24 00:00:00Z' + (n::double precision / $1) * interval '365 days' as created
                from generate_series(1::bigint, $1::bigint) n
            ) g
        ) t`,
      [rows],
    );
    for (const i of indexes) await client.query(i.indexdef);
    // As autovacuum leaves an insert-only table: statistics, and the visibility map the index-only scans rely on.
    await client.query('vacuum (analyze) transfer_view');
    // The insert's trigger appended the KPIs' counts per key (migration 0022): folded as the first reader would, then
    // vacuumed as autovacuum would after that many inserts (the rollup's reads are index-only scans, migration 0025).
    await foldKpiChanges(pool);
    await client.query('vacuum (analyze) transfer_kpis, transfer_kpi_changes');
  } finally {
    client.release();
  }
  const sample = await pool.query<{ transaction_id: string }>(
    'select transaction_id from transfer_view tablesample system (1) limit 500',
  );
  return {
    transactionIds: sample.rows.map((r) => r.transaction_id),
    subsidiaries: Array.from({ length: 10 }, (_, i) => `did:ethr:0xsub${String(i).padStart(38, '0')}`),
    counterparties: Array.from({ length: 200 }, (_, i) => `did:ethr:0xcp${String(i).padStart(39, '0')}`),
    assets: ['ETH', 'BTC', 'USDC', 'USDT', 'SOL', 'XRP', 'DOT', 'ADA'],
  };
}
