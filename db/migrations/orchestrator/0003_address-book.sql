-- Up Migration
-- The group's address registry (the source of truth for every subsidiary's address book at the network) and the
-- bookkeeping of the reconciliation workflow that pushes it there.

-- One row per (asset, address, tag): an address belongs to exactly one subsidiary. `tag` is '' when there is none;
-- `network_address` is the string the network stores and lists (`<address>:<tag>` or `<address>`). Values are
-- normalised by lib/address-book/entry.ts before they get here. `change_seq` grows with every write, so a run can tell
-- what changed since the last one.
create sequence address_registry_change_seq;
create table address_registry (
  asset text not null,
  address text not null,
  tag text not null default '',
  vasp_did text not null,
  customer_ref text not null,
  network_address text generated always as (case when tag = '' then address else address || ':' || tag end) stored,
  change_seq bigint not null default nextval('address_registry_change_seq'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (asset, address, tag)
);
-- The desired set of a VASP, read in network-address order; tagged rows also yield their master address.
create index address_registry_vasp_network_idx on address_registry (vasp_did, network_address);
create index address_registry_vasp_master_idx on address_registry (vasp_did, address) where tag <> '';
create index address_registry_vasp_ref_idx on address_registry (vasp_did, customer_ref);
create index address_registry_vasp_change_idx on address_registry (vasp_did, change_seq);

-- Deleted registry rows, so a later run can tell a deletion from "never there" (kept small: pruned by the runs).
create table address_registry_removed (
  vasp_did text not null,
  asset text not null,
  address text not null,
  tag text not null,
  change_seq bigint not null default nextval('address_registry_change_seq'),
  removed_at timestamptz not null default now()
);
create index address_registry_removed_idx on address_registry_removed (vasp_did, change_seq);

-- Whoever writes the registry (the API, a migration, an operator's SQL), a change moves change_seq and a deletion
-- leaves a tombstone, so incremental runs see every change.
create function address_registry_touch() returns trigger language plpgsql as $$
begin
  if new.customer_ref is distinct from old.customer_ref or new.vasp_did is distinct from old.vasp_did
     or new.address is distinct from old.address or new.tag is distinct from old.tag or new.asset is distinct from old.asset then
    new.change_seq := nextval('address_registry_change_seq');
    new.updated_at := now();
    if new.vasp_did is distinct from old.vasp_did or new.address is distinct from old.address or new.tag is distinct from old.tag
       or new.asset is distinct from old.asset then
      insert into address_registry_removed (vasp_did, asset, address, tag) values (old.vasp_did, old.asset, old.address, old.tag);
    end if;
  end if;
  return new;
end $$;
create trigger address_registry_touch before update on address_registry
  for each row execute function address_registry_touch();

create function address_registry_tombstones() returns trigger language plpgsql as $$
begin
  insert into address_registry_removed (vasp_did, asset, address, tag) select vasp_did, asset, address, tag from gone;
  return null;
end $$;
create trigger address_registry_tombstones after delete on address_registry
  referencing old table as gone for each statement execute function address_registry_tombstones();

-- One row per reconciliation run (a run may span several workflow executions through continue-as-new).
-- At most one running run per VASP: the partial unique index is the lock.
create table address_book_runs (
  run_id uuid primary key,
  vasp_did text not null,
  workflow_id text not null,
  trigger text not null,
  -- 'full': the network's whole listing is the starting point; 'incremental': the mirror below, for the addresses the
  -- registry changed since the last run (`watermark` is the registry's change_seq the run's diff reflects).
  mode text not null default 'full' check (mode in ('full', 'incremental')),
  watermark bigint,
  status text not null default 'running' check (status in ('running', 'succeeded', 'failed', 'skipped')),
  phase text not null default 'starting',
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  -- Listing of the network at the start: progress (for resuming) and result.
  listed_pages integer not null default 0,
  listing_done boolean not null default false,
  network_before bigint,
  -- The same for the listing that verifies the result, when the run needs one.
  verify_pages integer not null default 0,
  verify_done boolean not null default false,
  network_after bigint,
  -- The delta, once computed (the delta rows themselves are in address_book_delta).
  delta_ready boolean not null default false,
  mirror_built boolean not null default false,
  desired bigint,
  to_add bigint,
  to_update bigint,
  to_remove bigint,
  method text check (method in ('none', 'register', 'upload')),
  -- Progress of the removals and single registrations (the uploads keep theirs in address_book_chunks).
  removed_through bigint not null default 0,
  registered_through bigint not null default 0,
  -- Rows the network refused or did not take (exact; address_book_rejections keeps the first few thousand).
  rejected bigint not null default 0,
  report jsonb,
  error text
);
create unique index address_book_runs_one_running_idx on address_book_runs (vasp_did) where status = 'running';
create index address_book_runs_vasp_idx on address_book_runs (vasp_did, started_at desc);

-- Staging, keyed by run: never in memory, never in workflow history. Each run gets its own partition of each table
-- (created when it starts, dropped when it ends: dropping a million rows costs nothing). Partitions are unlogged,
-- cheap to write; a database crash empties them, which the activities detect and turn into a failed run that the next
-- run redoes.
-- `kind` is 'before' (the listing the diff starts from) or 'after' (the one that verifies the result); `n` counts the
-- listing rows of one address (the network lists an address once per asset it was registered with).
create table address_book_listing (
  run_id uuid not null,
  kind text not null check (kind in ('before', 'after')),
  address text not null,
  customer_ref text not null,
  n integer not null default 1,
  primary key (run_id, kind, address)
) partition by list (run_id);

-- What the run has to change at the network: 'add' rows (new or changed customerRef) numbered 1..to_add+to_update in
-- network-address order, 'remove' rows numbered 1..to_remove. `bytes` is the row's size in the uploaded CSV.
create table address_book_delta (
  run_id uuid not null,
  action text not null check (action in ('add', 'remove')),
  seq bigint not null,
  address text not null,
  asset text not null default '',
  customer_ref text not null default '',
  is_update boolean not null default false,
  bytes integer not null default 0,
  primary key (run_id, action, seq)
) partition by list (run_id);

-- Each CSV chunk of a run and where it stands. A chunk is a fixed range of 'add' rows, so the same chunk number always
-- holds the same rows; the upload activity moves it planned → uploading → uploaded and never uploads an uploaded one.
create table address_book_chunks (
  run_id uuid not null references address_book_runs (run_id) on delete cascade,
  chunk_no integer not null,
  first_seq bigint not null,
  last_seq bigint not null,
  rows integer not null,
  bytes bigint not null,
  state text not null default 'planned' check (state in ('planned', 'uploading', 'uploaded')),
  attempts integer not null default 0,
  upload_key text,
  upload_counter integer,
  started_at timestamptz,
  uploaded_at timestamptz,
  primary key (run_id, chunk_no)
);

-- Rows the network refused or did not take, with the reason (the first few thousand per run; the count is exact).
create table address_book_rejections (
  run_id uuid not null references address_book_runs (run_id) on delete cascade,
  action text not null check (action in ('add', 'remove')),
  address text not null,
  asset text not null default '',
  customer_ref text not null default '',
  reason text not null,
  primary key (run_id, address)
);

-- What the network holds for each VASP as far as the orchestrator knows: the result of its last successful run, kept up
-- to date by every later run. An incremental run diffs the registry's changes since `watermark` against it instead of
-- listing a million addresses again, after checking that the network's count still matches. A full run builds a new
-- mirror in a partition of its own (while its uploads are under way) and the VASP's state then points to it; the old
-- one is dropped. Partitions are unlogged: a database crash empties them, which the `distinct_rows` check notices (the
-- next run is then a full one).
create table address_book_mirror (
  run_id uuid not null,
  address text not null,
  customer_ref text not null,
  n integer not null default 1,
  primary key (run_id, address)
) partition by list (run_id);
create table address_book_state (
  vasp_did text primary key,
  -- The last successful run, and the full run whose mirror partition holds the VASP's mirror.
  run_id uuid not null,
  mirror_run_id uuid not null,
  watermark bigint not null,
  -- The listing's total and the number of distinct addresses the mirror holds.
  network_rows bigint not null,
  distinct_rows bigint not null,
  updated_at timestamptz not null default now()
);

-- Down Migration
drop table address_book_state;
drop table address_book_mirror;
drop table address_book_rejections;
drop table address_book_chunks;
drop table address_book_delta;
drop table address_book_listing;
drop table address_book_runs;
drop table address_registry;
drop table address_registry_removed;
drop function address_registry_tombstones();
drop function address_registry_touch();
drop sequence address_registry_change_seq;
