-- Up Migration
-- Decision policies (policy/store.ts). A version is immutable: a change is a new row with the next number for its
-- VASP (a subsidiary's DID, or the gateway's for the group's policy), and the document's sha256 names its content.
create table policy_versions (
  id uuid primary key,
  vasp_did text not null,
  version integer not null,
  content_hash text not null,
  -- {currency, incoming, outgoing}: the canonical document (rules sorted by order) the hash is taken of.
  document jsonb not null,
  author text not null,
  note text not null default '',
  created_at timestamptz not null default clock_timestamp(),
  unique (vasp_did, version)
);
create function policy_versions_refuse_update() returns trigger language plpgsql as $$
begin
  raise exception 'policy_versions are immutable: % refused', tg_op
    using errcode = 'insufficient_privilege', hint = 'save a new version instead';
end;
$$;
create trigger policy_versions_immutable before update on policy_versions
  for each row execute function policy_versions_refuse_update();

-- Which version decides a VASP's transfers, and which one runs beside it in shadow mode (recorded, never acted on).
create table policy_assignments (
  vasp_did text primary key,
  active_version_id uuid references policy_versions (id),
  shadow_version_id uuid references policy_versions (id),
  updated_by text not null,
  updated_at timestamptz not null default clock_timestamp()
);

-- Every decision a policy took (shadow ones beside the active one), with the non-personal facts it was taken on.
create table policy_decisions (
  id bigserial primary key,
  transfer_id text not null,
  direction text not null check (direction in ('incoming', 'outgoing')),
  -- The transfer's VASP; policy_vasp_did is whose policy decided (the group's under the gateway's DID), null under
  -- the built-in default.
  vasp_did text not null,
  policy_vasp_did text,
  version_id uuid,
  shadow boolean not null,
  action text not null,
  decision jsonb not null,
  facts jsonb not null,
  created_at timestamptz not null default clock_timestamp()
);
create index policy_decisions_vasp_created on policy_decisions (vasp_did, created_at);
create index policy_decisions_transfer on policy_decisions (transfer_id);
create index policy_decisions_shadow on policy_decisions (policy_vasp_did, created_at) where shadow;

-- Down Migration
drop table policy_decisions;
drop table policy_assignments;
drop trigger policy_versions_immutable on policy_versions;
drop table policy_versions;
drop function policy_versions_refuse_update();
