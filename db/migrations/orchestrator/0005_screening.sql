-- Up Migration
-- Sanctions screening: lists loaded from files in OFAC's SDN CSV format, matched by trigram similarity on normalised
-- names, and the digital-currency addresses they name as a risk list. A list is replaced whole when reloaded.
create extension if not exists pg_trgm schema public;

create table sanctions_lists (
  name text primary key,
  source text not null,
  loaded_at timestamptz not null default now(),
  entries integer not null,
  aliases integer not null,
  addresses integer not null
);

create table sanctions_names (
  id bigserial primary key,
  list text not null references sanctions_lists (name) on delete cascade,
  ent_num integer not null,
  name text not null,
  normalized text not null,
  kind text not null,            -- 'primary' or the alias type (aka, fka, nka)
  entry_type text not null,      -- individual, entity, vessel, aircraft
  programs text[] not null
);
create index sanctions_names_trgm_idx on sanctions_names using gin (normalized public.gin_trgm_ops);
create index sanctions_names_list_idx on sanctions_names (list, ent_num);

create table risk_addresses (
  list text not null,
  asset text not null,
  address text not null,
  ent_num integer,
  category text not null,
  primary key (list, asset, address)
);
create index risk_addresses_address_idx on risk_addresses (lower(address));

-- Down Migration
drop table risk_addresses;
drop table sanctions_names;
drop table sanctions_lists;
