-- Up Migration
-- The answer-time histogram of the KPI rollup (migration 0022) as one row per (UTC day, subsidiary, direction) holding
-- its bucket counts in an array, instead of a row per bucket: the percentiles of 30 days of the whole group read about
-- 660 rows instead of 27,000 (GET /v1/kpis, transfer-view/kpis-store.ts). transfer_kpis' kind 5 rows: key '', the
-- counts the answered transfers make (as the kind 4 rows they replace summed), and answer_counts[i + 1] the transfers
-- answered in bucket i of transfer_kpi_answer_bucket. The triggers still append kind 4 rows (a row per bucket) to
-- transfer_kpi_changes; the fold (foldKpiChanges) adds them into the arrays. Same buckets, so the same estimates.
alter table transfer_kpis add column answer_counts int[];
alter table transfer_kpis drop constraint transfer_kpis_kind_check;

-- The histogram array of (bucket, count) pairs: element i + 1 counts bucket i, as long as its highest bucket needs.
create function transfer_kpi_histogram(buckets int[], counts bigint[]) returns int[]
  language sql immutable parallel safe
  as $$
    select coalesce(array_agg(coalesce(c.n, 0)::int order by g.i), '{}')
      from generate_series(0, (select max(b) from unnest(buckets) b)) g (i)
      left join (select b, sum(n) as n from unnest(buckets, counts) u (b, n) group by b) c on c.b = g.i
  $$;

-- Element-wise sum of two histogram arrays (the shorter one counts 0 past its end).
create function transfer_kpi_histogram_add(a int[], b int[]) returns int[]
  language sql immutable parallel safe
  as $$
    select coalesce(array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) order by i), '{}')
      from generate_series(1, greatest(cardinality(a), cardinality(b))) i
  $$;

insert into transfer_kpis
select 5, bucket, subsidiary_did, direction, '', sum(total), sum(sent), sum(answered), sum(accepted), sum(identified),
       sum(decided), sum(automated), transfer_kpi_histogram(array_agg(key::int), array_agg(total))
  from transfer_kpis where kind = 4
 group by bucket, subsidiary_did, direction;
delete from transfer_kpis where kind = 4;
alter table transfer_kpis add constraint transfer_kpis_kind_check check (kind between 1 and 5 and kind <> 4);

-- The reader's rows from the index alone (index-only scans): the rollup's rows are written in the order the fold meets
-- their keys, so a range's rows lie about one per heap page (30 days of the whole group: 8,200 rows on 5,300 pages).
-- Unique on the same key as before, so the fold's `on conflict` still names it.
drop index transfer_kpis_key;
create unique index transfer_kpis_key on transfer_kpis (kind, bucket, subsidiary_did, direction, key)
  include (total, sent, answered, accepted, identified, decided, automated, answer_counts) nulls not distinct;

-- Down Migration
-- The kind 4 rows' other counts are each transfer's, which the arrays do not keep: counted again from the rows, less
-- the changes not folded yet (the reader adds those).
delete from transfer_kpis where kind = 5;
drop index transfer_kpis_key;
create unique index transfer_kpis_key on transfer_kpis (kind, bucket, subsidiary_did, direction, key) nulls not distinct;
alter table transfer_kpis drop constraint transfer_kpis_kind_check;
alter table transfer_kpis add constraint transfer_kpis_kind_check check (kind between 1 and 4);
alter table transfer_kpis drop column answer_counts;
insert into transfer_kpis
select kind, bucket, subsidiary_did, direction, key, sum(total), sum(sent), sum(answered), sum(accepted),
       sum(identified), sum(decided), sum(automated)
  from (select k.kind, k.bucket, t.subsidiary_did, t.direction, k.key, 1 as total, k.sent, k.answered, k.accepted,
               k.identified, k.decided, k.automated
          from transfer_view t,
               lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did,
                                         t.decided_by, t.answered_at) k
         where k.kind = 4
        union all
        select kind, bucket, subsidiary_did, direction, key, -total, -sent, -answered, -accepted, -identified, -decided,
               -automated
          from transfer_kpi_changes where kind = 4) c
 group by 1, 2, 3, 4, 5
having sum(total) <> 0;
drop function transfer_kpi_histogram_add(int[], int[]);
drop function transfer_kpi_histogram(int[], bigint[]);
