-- Up Migration
-- VASP profile fields as the network keeps them: a history of values per field, newest first when read
-- (`values` of common_IdentityFields, "History of values for the field. Last value first"). The VASP's own name
-- stays in vasps (the operator's seed); a `name` field, once set, takes precedence when the profile is read.
create table vasp_field_values (
  id bigserial primary key,
  vasp_did text not null references vasps (did) on delete cascade,
  field_name text not null,
  value jsonb not null,
  issuer text not null,
  issued_at timestamptz not null default now()
);
create index vasp_field_values_latest_idx on vasp_field_values (vasp_did, field_name, id desc);

-- VASP settings (PUT /tf/vasps/:did/settings). A VASP without a row has the defaults: automatic confirmation and
-- redirection on, discoverable, no status that triggers processBlockchainTransaction.
create table vasp_settings (
  vasp_did text primary key references vasps (did) on delete cascade,
  autoconfirm boolean not null default true,
  autoredirect boolean not null default true,
  vasp_discoverability boolean not null default true,
  status_to_process_blockchain text check (status_to_process_blockchain in ('CREATED', 'SENT', 'ACK', 'ACCEPTED')),
  updated_at timestamptz not null default now()
);

-- The personal-data service's escrow key per VASP (hybrid mode, pseudo end-to-end). The service generates and holds
-- it; the seed is stored sealed (AES-256-GCM under a key in service_secrets, bound to the VASP and did:key) and never
-- leaves the service. Rotation keeps the old key, retired, for data already encrypted to it.
create table escrow_keys (
  id bigserial primary key,
  vasp_did text not null references vasps (did) on delete cascade,
  did_key text not null unique,
  state text not null check (state in ('active', 'retired')),
  sealed_seed bytea not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
create unique index escrow_keys_one_active_per_vasp on escrow_keys (vasp_did) where state = 'active';

-- Down Migration
drop table escrow_keys;
drop table vasp_settings;
drop table vasp_field_values;
