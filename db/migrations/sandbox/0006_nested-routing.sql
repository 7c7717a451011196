-- Up Migration
-- Nested VASPs: how a message that reaches a gateway finds its subsidiary. Address-query webhooks are registered per
-- subsidiary; routing tasks are written with the transaction that needs them and resolved in the background, so no
-- outbound call happens inside a database transaction.
create table address_query_webhooks (
  vasp_did text primary key references vasps (did) on delete cascade,
  url text not null,
  params text not null,
  secret text not null,
  created_at timestamptz not null default now()
);

create table routing_tasks (
  transaction_id uuid primary key,
  gateway_did text not null,
  state text not null default 'pending' check (state in ('pending', 'done')),
  outcome text,
  attempts integer not null default 0,
  next_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index routing_tasks_pending_idx on routing_tasks (next_at) where state = 'pending';

-- Down Migration
drop table routing_tasks;
drop table address_query_webhooks;
