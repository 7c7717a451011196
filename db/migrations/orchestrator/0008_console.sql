-- Up Migration
-- What the compliance console lists and filters: one row per transfer over both directions, written by the workflows
-- (through the recordTransferView activity) at each change of state, so a list never waits on Temporal's visibility,
-- which is eventually consistent and knows nothing of hits or deadlines. The row carries metadata only: no personal
-- data. `version` grows with the workflow's history, so a late write never overwrites a newer one. If the table is
-- lost it is rebuilt from the network (`npm run cli -- console rebuild-view`, docs/console.md).
create table transfer_view (
  -- The workflow's business id (outgoing-<transfer id>, incoming-<transaction id>): unique over both directions, and
  -- the tie-breaker of the list's order.
  workflow_id text primary key,
  direction text not null check (direction in ('incoming', 'outgoing')),
  -- Outgoing: the transfer id (the caller's Idempotency-Key); incoming: the network's transaction id.
  id text not null,
  -- The network's transaction id (an outgoing transfer has one once created) and the transfer's reference
  -- (outgoing: its id, which is the network's transactionRef; incoming: the originator's transactionRef).
  transaction_id text,
  reference text,
  -- The network's status, or the orchestrator's own before/after it (RECEIVED, PREPARED, FAILED, EXPIRED).
  status text not null,
  -- Incoming: the workflow's phase (routing, awaiting-route, awaiting-review, …); outgoing: null.
  phase text,
  final boolean not null default false,
  needs_review boolean not null default false,
  needs_routing boolean not null default false,
  escalated boolean not null default false,
  -- The group's VASP the transfer belongs to (the originator of an outgoing one, the routed subsidiary of an incoming
  -- one) and the VASP on the other side.
  subsidiary_did text,
  counterparty_did text,
  asset text,
  amount text,
  -- Screening hits (sanctions-list entries and scores, never the customer's data) and the decision with who made it.
  hits jsonb,
  decision jsonb,
  -- When the person's wait escalates: the review or routing deadline while one is pending.
  deadline_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null default now(),
  version integer not null default 0,
  -- The transfer id is the reference (outgoing) or the transaction id (incoming), so these two cover it.
  search text generated always as (lower(coalesce(transaction_id, '') || ' ' || coalesce(reference, ''))) stored
);
-- Each filter the console offers walks one index in the list's order (created_at, workflow_id); other filters are
-- checked on the rows it yields.
create index transfer_view_created_idx on transfer_view (created_at, workflow_id);
create index transfer_view_direction_idx on transfer_view (direction, created_at, workflow_id);
create index transfer_view_status_idx on transfer_view (status, created_at, workflow_id);
create index transfer_view_subsidiary_idx on transfer_view (subsidiary_did, created_at, workflow_id);
create index transfer_view_counterparty_idx on transfer_view (counterparty_did, created_at, workflow_id);
create index transfer_view_asset_idx on transfer_view (asset, created_at, workflow_id);
-- The review queue: small, and read on every refresh.
create index transfer_view_review_idx on transfer_view (created_at, workflow_id) where needs_review;
create index transfer_view_routing_idx on transfer_view (created_at, workflow_id) where needs_routing;
create index transfer_view_search_idx on transfer_view using gin (search public.gin_trgm_ops);

-- One row per key rotation (API, CLI or schedule), written by the rotation's activities: created when its new key
-- is, finished when it is activated or the rotation fails.
create table key_rotations (
  workflow_id text not null,
  run_id text not null,
  vasp_did text not null,
  requested_by text not null,
  reason text not null,
  status text not null check (status in ('running', 'completed', 'failed')),
  step text,
  new_key_id uuid,
  new_did text,
  previous_did text,
  error jsonb,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (workflow_id, run_id)
);
create index key_rotations_started_idx on key_rotations (started_at, workflow_id, run_id);
create index key_rotations_vasp_idx on key_rotations (vasp_did, started_at, workflow_id, run_id);

-- The address-book runs list, oldest or newest first over every subsidiary.
create index address_book_runs_started_idx on address_book_runs (started_at, run_id);

-- Down Migration
drop index address_book_runs_started_idx;
drop table key_rotations;
drop table transfer_view;
