-- Up Migration
-- The network's side: VASP profiles (nesting is set by the operator's seed only), users, their roles and API credentials.
create table vasps (
  did text primary key,
  name text not null,
  parent_did text references vasps (did),
  created_at timestamptz not null default now()
);
create index vasps_parent_idx on vasps (parent_did);

create table users (
  did text primary key,
  name text not null,
  email text not null,
  role text not null default 'admin',
  job_title text not null default '',
  issued_at timestamptz not null default now()
);

create table user_roles (
  user_did text not null references users (did) on delete cascade,
  vasp_did text not null references vasps (did) on delete cascade,
  permissions text[] not null,
  primary key (user_did, vasp_did)
);

-- Client secrets are random and high-entropy, so a SHA-256 digest is enough to keep them unreadable at rest.
create table api_clients (
  client_id text primary key,
  secret_sha256 bytea not null,
  user_did text not null references users (did) on delete cascade
);

-- Secrets the sandbox generates for itself once (token signing key) and keeps across restarts.
create table service_secrets (
  name text primary key,
  value bytea not null,
  created_at timestamptz not null default now()
);

-- Down Migration
drop table service_secrets;
drop table api_clients;
drop table user_roles;
drop table users;
drop table vasps;
