-- Up Migration
-- The compliance KPIs (GET /v1/kpis, transfer-view/kpis-store.ts) kept as transfers change rather than counted per
-- request. transfer_kpis holds the counts per UTC day (hour for `kind` 3) of created_at, subsidiary and direction, in
-- four kinds of rows, `key` telling them apart within a kind:
--   1 per day and status (key): every count; the totals, the statuses and the daily series;
--   2 per day and asset (key, NULL when unknown): the transfers by type;
--   3 per hour (key ''): every count; the hourly series;
--   4 per day and answer-time bucket (key: the bucket's number, transfer_kpi_answer_bucket): the answered transfers,
--     for the answer time's percentiles where too many transfers were answered to sort them per request.
-- A day rather than an hour for kinds 1, 2 and 4: a busy group's hour has fewer transfers than (subsidiary, direction,
-- status, asset) keys, so hourly rows would be about as many as the transfers they count.
create table transfer_kpis (
  kind smallint not null check (kind between 1 and 4),
  bucket timestamptz not null,
  subsidiary_did text,
  direction text not null,
  key text,
  total bigint not null,
  sent bigint not null,
  answered bigint not null,
  accepted bigint not null,
  identified bigint not null,
  decided bigint not null,
  automated bigint not null
);
create unique index transfer_kpis_key on transfer_kpis (kind, bucket, subsidiary_did, direction, key) nulls not distinct;

-- What each write to transfer_view adds to transfer_kpis (a row leaving a key counts -1 there), appended by the
-- triggers below and folded into transfer_kpis by the KPI reader (foldKpiChanges). Writers only append here: no row is
-- shared between concurrent writes, so they neither wait on each other nor deadlock. Readers add both tables up.
create table transfer_kpi_changes (like transfer_kpis);
-- Every fold deletes what it folded: readers find the few live rows by the index instead of scanning the dead ones,
-- and autovacuum comes every 10,000 dead rows rather than at a fraction of the table.
create index transfer_kpi_changes_bucket on transfer_kpi_changes (kind, bucket);
alter table transfer_kpi_changes set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);

-- Bucket 0 is [0, 1 s); bucket i ≥ 1 is [2^((i-1)/4), 2^(i/4)) s, each about 19 % wider than the one before.
create function transfer_kpi_answer_bucket(seconds double precision) returns int
  language sql immutable parallel safe
  as $$ select case when seconds < 1 then 0 else floor(4 * ln(seconds) / ln(2))::int + 1 end $$;

-- The rows of transfer_kpis one transfer counts in, with what it counts there (0 or 1 each).
create function transfer_kpi_keys(created_at timestamptz, status text, asset text, transaction_id text,
                                  counterparty_did text, decided_by text, answered_at timestamptz)
  returns table (kind smallint, bucket timestamptz, key text, sent int, answered int, accepted int, identified int,
                 decided int, automated int)
  language sql immutable parallel safe
  as $$
    select k.kind, k.bucket, k.key, (transaction_id is not null)::int, (answered_at is not null)::int,
           (status = 'ACCEPTED')::int, (counterparty_did is not null)::int, (decided_by is not null)::int,
           (decided_by is not distinct from 'system')::int
      from (values
        (1::smallint, date_trunc('day', created_at at time zone 'UTC') at time zone 'UTC', status),
        (2::smallint, date_trunc('day', created_at at time zone 'UTC') at time zone 'UTC', asset),
        (3::smallint, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', ''),
        (4::smallint, date_trunc('day', created_at at time zone 'UTC') at time zone 'UTC',
         transfer_kpi_answer_bucket(extract(epoch from answered_at - created_at)::float8)::text)
      ) k (kind, bucket, key)
     where k.kind <> 4 or answered_at is not null
  $$;

-- Statement-level, over the transition tables: a bulk insert appends one row per key it touches, not per transfer, and
-- an update that changes nothing the KPIs count (most do: phase, version, hits…) appends nothing.
create function transfer_kpis_changed() returns trigger language plpgsql as $$
begin
  if TG_OP = 'INSERT' then
    insert into transfer_kpi_changes
    select k.kind, k.bucket, t.subsidiary_did, t.direction, k.key, count(*), sum(k.sent), sum(k.answered),
           sum(k.accepted), sum(k.identified), sum(k.decided), sum(k.automated)
      from new_rows t,
           lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did, t.decided_by,
                                     t.answered_at) k
     group by 1, 2, 3, 4, 5;
  elsif TG_OP = 'DELETE' then
    insert into transfer_kpi_changes
    select k.kind, k.bucket, t.subsidiary_did, t.direction, k.key, -count(*), -sum(k.sent), -sum(k.answered),
           -sum(k.accepted), -sum(k.identified), -sum(k.decided), -sum(k.automated)
      from old_rows t,
           lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did, t.decided_by,
                                     t.answered_at) k
     group by 1, 2, 3, 4, 5;
  else
    insert into transfer_kpi_changes
    select k.kind, k.bucket, t.subsidiary_did, t.direction, k.key, sum(t.sign), sum(t.sign * k.sent),
           sum(t.sign * k.answered), sum(t.sign * k.accepted), sum(t.sign * k.identified), sum(t.sign * k.decided),
           sum(t.sign * k.automated)
      from (select 1 as sign, n.* from new_rows n union all select -1, o.* from old_rows o) t,
           lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did, t.decided_by,
                                     t.answered_at) k
     group by 1, 2, 3, 4, 5
    having (sum(t.sign), sum(t.sign * k.sent), sum(t.sign * k.answered), sum(t.sign * k.accepted),
            sum(t.sign * k.identified), sum(t.sign * k.decided), sum(t.sign * k.automated)) <> (0, 0, 0, 0, 0, 0, 0);
  end if;
  return null;
end;
$$;
-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers. An insert … on conflict do
-- update fires both the insert and the update trigger, each with its own rows.
create trigger transfer_kpis_inserted after insert on transfer_view referencing new table as new_rows
  for each statement execute function transfer_kpis_changed();
create trigger transfer_kpis_updated after update on transfer_view referencing old table as old_rows new table as new_rows
  for each statement execute function transfer_kpis_changed();
create trigger transfer_kpis_deleted after delete on transfer_view referencing old table as old_rows
  for each statement execute function transfer_kpis_changed();
-- Truncating the projection (a rebuild, client/transfers/rebuild-list.ts, starts from nothing) empties the counts too.
create function transfer_kpis_truncated() returns trigger language plpgsql as $$
begin
  truncate transfer_kpis, transfer_kpi_changes;
  return null;
end;
$$;
create trigger transfer_kpis_truncated after truncate on transfer_view
  for each statement execute function transfer_kpis_truncated();

-- The counts of the transfers already there.
insert into transfer_kpis
select k.kind, k.bucket, t.subsidiary_did, t.direction, k.key, count(*), sum(k.sent), sum(k.answered), sum(k.accepted),
       sum(k.identified), sum(k.decided), sum(k.automated)
  from transfer_view t,
       lateral transfer_kpi_keys(t.created_at, t.status, t.asset, t.transaction_id, t.counterparty_did, t.decided_by,
                                 t.answered_at) k
 group by 1, 2, 3, 4, 5;

-- Down Migration
drop trigger transfer_kpis_truncated on transfer_view;
drop function transfer_kpis_truncated();
drop trigger transfer_kpis_deleted on transfer_view;
drop trigger transfer_kpis_updated on transfer_view;
drop trigger transfer_kpis_inserted on transfer_view;
drop function transfer_kpis_changed();
drop function transfer_kpi_keys(timestamptz, text, text, text, text, text, timestamptz);
drop function transfer_kpi_answer_bucket(double precision);
drop table transfer_kpi_changes;
drop table transfer_kpis;
