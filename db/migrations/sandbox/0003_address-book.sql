-- Up Migration
-- The network's address book: the addresses each VASP says it operates (CSV uploads, single registrations), the
-- uploads themselves, and the outbox where the sandbox "sends" e-mails (the upload summaries).

-- One row per (VASP, asset, address). `asset` is '' when the address was registered without an asset (the
-- registerCustomer body makes it optional); such a row answers ownership lookups for any asset. `address` is stored
-- normalised (see sandbox/address-book/rules.ts): memo/tag assets keep `<address>:<tag>` as one value.
-- `written_by` names the processing run that last wrote the row, which is how a CSV upload tells "duplicate of an
-- earlier row of this file" from "already in the book" across batches without keeping the file's keys in memory.
-- The primary key carries customer_ref and source_type, so listing a VASP's book page by page is an index-only scan.
create table addresses (
  vasp_did text not null references vasps (did) on delete cascade,
  asset text not null,
  address text not null,
  customer_ref text not null,
  source_type text not null default 'INTERNAL' check (source_type in ('INTERNAL', 'EXTERNAL')),
  written_by uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (vasp_did, asset, address) include (customer_ref, source_type)
);
-- Ownership lookups ("who operates this address?") across all VASPs.
create index addresses_address_idx on addresses (address) include (vasp_did, asset, source_type);

-- Row counts per VASP and source type, kept by statement-level triggers so a listing's `total` costs one lookup
-- instead of counting a million rows on every page, whichever code path writes the table.
create table address_counts (
  vasp_did text not null,
  source_type text not null,
  n bigint not null,
  primary key (vasp_did, source_type)
);

create function address_counts_add() returns trigger language plpgsql as $$
begin
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n;
  return null;
end $$;

create function address_counts_remove() returns trigger language plpgsql as $$
begin
  update address_counts c set n = c.n - d.n
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  return null;
end $$;

create function address_counts_move() returns trigger language plpgsql as $$
begin
  -- Exact whatever the update changed: take the old rows out of their counters and put the new rows in theirs.
  update address_counts c set n = c.n - d.n
  from (select vasp_did, source_type, count(*) as n from old_rows group by vasp_did, source_type) d
  where c.vasp_did = d.vasp_did and c.source_type = d.source_type;
  insert into address_counts (vasp_did, source_type, n)
  select vasp_did, source_type, count(*) from new_rows group by vasp_did, source_type
  on conflict (vasp_did, source_type) do update set n = address_counts.n + excluded.n;
  return null;
end $$;

create trigger addresses_count_insert after insert on addresses
  referencing new table as new_rows for each statement execute function address_counts_add();
create trigger addresses_count_delete after delete on addresses
  referencing old table as old_rows for each statement execute function address_counts_remove();
create trigger addresses_count_update after update on addresses
  referencing old table as old_rows new table as new_rows for each statement execute function address_counts_move();

-- The per-VASP upload counter reported as uploadedFile.metadata.extra.counter.
create table address_upload_counters (
  vasp_did text primary key references vasps (did) on delete cascade,
  counter integer not null
);

-- One row per accepted CSV file. The file waits in the spool directory until processed. `claimed_by` and
-- `heartbeat_at` say which sandbox process is working on it, so a restarted sandbox resumes only abandoned uploads.
create table address_uploads (
  id uuid primary key,
  vasp_did text not null references vasps (did) on delete cascade,
  user_did text not null references users (did) on delete cascade,
  counter integer not null,
  file_name text not null,
  size_bytes bigint not null,
  spool_path text not null,
  status text not null default 'queued' check (status in ('queued', 'processing', 'completed', 'failed')),
  rows_read integer not null default 0,
  registered integer not null default 0,
  updated integer not null default 0,
  rejected integer not null default 0,
  error text,
  claimed_by uuid,
  heartbeat_at timestamptz not null default now(),
  received_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
create index address_uploads_vasp_idx on address_uploads (vasp_did, received_at);
create index address_uploads_open_idx on address_uploads (heartbeat_at) where status in ('queued', 'processing');

-- Rejected rows with their reasons (the first few thousand of an upload; the count above is always exact).
create table address_upload_rejections (
  upload_id uuid not null references address_uploads (id) on delete cascade,
  line integer not null,
  asset text not null,
  address text not null,
  customer_ref text not null,
  reason text not null,
  primary key (upload_id, line)
);

-- E-mails the sandbox "sends" (upload summaries), readable by tests and operators at GET /sandbox/outbox.
create table outbox_emails (
  id bigserial primary key,
  to_address text not null,
  subject text not null,
  body text not null,
  data jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index outbox_emails_to_idx on outbox_emails (to_address, id);

-- Down Migration
drop table outbox_emails;
drop table address_upload_rejections;
drop table address_uploads;
drop table address_upload_counters;
drop table addresses;
drop table address_counts;
drop function address_counts_move();
drop function address_counts_remove();
drop function address_counts_add();
