-- Up Migration
-- API keys of the services that call the internal API (the bank's core system sending transfers, say). The key itself
-- is shown once when created; only its SHA-256 is kept (the secret is 256 random bits, so a slow hash would add
-- nothing), with the public prefix that names it in logs and the audit log.
create table api_keys (
  id uuid primary key,
  prefix text not null unique,
  name text not null,
  role text not null check (role in ('viewer', 'operator', 'compliance', 'admin')),
  secret_sha256 bytea not null,
  created_at timestamptz not null default now(),
  -- Who created it or revoked it: the principal's name (the audit log has the whole principal).
  created_by text not null,
  revoked_at timestamptz,
  revoked_by text,
  -- Written at most once a minute per API process, not on every request.
  last_used_at timestamptz
);
create index api_keys_name_idx on api_keys (name);

-- Down Migration
drop table api_keys;
