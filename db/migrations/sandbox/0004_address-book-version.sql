-- Up Migration
-- Two changes for listing and loading big books.
--
-- A change counter per (VASP, source type) beside the row count, bumped by the same statement-level triggers on every
-- write to the book. The listing remembers where each page of a walk ended and starts the next page there (keyset)
-- instead of skipping `page * per_page` rows, as long as the counters show the book has not changed in between.
-- (A separate file from 0003_address-book because that one is already applied in development databases; the name
-- sorts after it.)
alter table address_counts add column version bigint not null default 1;

create or replace function address_counts_add() returns trigger language plpgsql as $$
begin
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n, version = address_counts.version + 1;
  return null;
end $$;

create or replace function address_counts_remove() returns trigger language plpgsql as $$
begin
  update address_counts c set n = c.n - d.n, version = c.version + 1
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  return null;
end $$;

create or replace function address_counts_move() returns trigger language plpgsql as $$
begin
  -- Exact whatever the update changed: take the old rows out of their counters and put the new rows in theirs.
  update address_counts c set n = c.n - d.n, version = c.version + 1
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n, version = address_counts.version + 1;
  return null;
end $$;

-- The foreign key from addresses to vasps cost a lookup per row, about a third of the time of registering a
-- million-row CSV. VASPs come only from the operator's seed, which never removes one, and every write path checks the
-- VASP (Access.require) before writing, so the key guarded nothing the code does not.
alter table addresses drop constraint addresses_vasp_did_fkey;

-- Down Migration
alter table addresses add constraint addresses_vasp_did_fkey foreign key (vasp_did) references vasps (did) on delete cascade;
create or replace function address_counts_add() returns trigger language plpgsql as $$
begin
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n;
  return null;
end $$;

create or replace function address_counts_remove() returns trigger language plpgsql as $$
begin
  update address_counts c set n = c.n - d.n
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  return null;
end $$;

create or replace function address_counts_move() returns trigger language plpgsql as $$
begin
  update address_counts c set n = c.n - d.n
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n;
  return null;
end $$;

alter table address_counts drop column version;
