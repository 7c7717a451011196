-- Up Migration
-- The network's rules engine (sandbox/rules): each VASP's ordered rules per direction, as /rules/set/direction
-- replaced them last.
create table rules (
  id uuid primary key,
  vasp_did text not null references vasps (did),
  direction text not null check (direction in ('incoming', 'outgoing')),
  "order" double precision not null,
  action_rule text not null,
  rule_check text not null,
  rule_value text not null,
  source text,
  created_at timestamptz not null default now(),
  created_by text not null
);
create index rules_vasp_idx on rules (vasp_did, direction, "order");

-- Down Migration
drop table rules;
