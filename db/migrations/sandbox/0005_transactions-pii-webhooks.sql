-- Up Migration
-- The network's side of transactions (sandbox/transactions), the personal-data store (sandbox/pii-store), notification
-- webhooks with their durable delivery outbox (sandbox/webhooks) and the simulated counterparty VASPs
-- (sandbox/counterparties). VASP columns carry no foreign keys where the network accepts DIDs outside its directory
-- (a beneficiary VASP may be unknown).

-- One row per Travel Rule message. `body` is the Transaction exactly as the API answers it, minus anything derived per
-- reader (the decrypted `ivms101` of hosted mode is never stored in clear). The columns are copies of body fields kept
-- for lookups and listing.
create table transactions (
  id uuid primary key,
  transaction_ref text,
  originator_vasp_did text not null,
  beneficiary_vasp_did text,
  status text not null,
  transaction_asset text not null,
  transaction_amount numeric not null,
  -- 'hosted' when the sandbox encrypted plain IVMS101 itself (hosted mode); 'client' when the caller sent `pii`.
  pii_mode text not null default 'none' check (pii_mode in ('none', 'client', 'hosted')),
  body jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index transactions_ref_idx on transactions (originator_vasp_did, transaction_ref) where transaction_ref is not null;
create index transactions_status_idx on transactions (status);
create index transactions_originator_idx on transactions (originator_vasp_did, created_at);
create index transactions_beneficiary_idx on transactions (beneficiary_vasp_did, created_at);

-- Idempotency claims on transactionRef, committed before the work starts so that a concurrent repeat sees the claim
-- (409 while in flight) and a later one the finished transaction (200). A claim without a transaction that is older
-- than a minute was abandoned (crashed request) and may be taken over.
create table transaction_ref_claims (
  originator_vasp_did text not null,
  transaction_ref text not null,
  transaction_id uuid,
  claimed_at timestamptz not null default now(),
  primary key (originator_vasp_did, transaction_ref)
);

-- Personal-data items: content-addressed (CIDv1, raw codec, sha2-256 of `data`, base32). The same bytes put by two
-- pairs of VASPs are one item with two owner rows; knowing a CID grants nothing without an owner row.
create table pii_items (
  cid text primary key,
  data text not null,
  created_at timestamptz not null default now()
);
create table pii_owners (
  cid text not null references pii_items (cid) on delete cascade,
  from_did text not null,
  to_did text not null,
  created_at timestamptz not null default now(),
  primary key (cid, from_did, to_did)
);
create index pii_owners_from_idx on pii_owners (from_did);
create index pii_owners_to_idx on pii_owners (to_did);

-- Notification webhooks: one per VASP, with the per-endpoint signing secret (`whsec_…`, see lib/webhook-signature.ts).
create table webhooks (
  vasp_did text primary key references vasps (did) on delete cascade,
  url text not null,
  secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The delivery outbox, written in the same database transaction as the change it reports, polled by the sandbox.
-- `message_id` is the webhook-id header: the same for every attempt of one delivery.
create table webhook_deliveries (
  id bigserial primary key,
  message_id text not null unique,
  vasp_did text not null,
  event text not null,
  transaction_id uuid,
  body text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed', 'dropped')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_status integer,
  last_error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where state = 'pending';
create index webhook_deliveries_vasp_idx on webhook_deliveries (vasp_did, id);

-- Simulated counterparty VASPs: their behaviour per destination address, and the did:key the sandbox holds for them
-- (simulation only: a real VASP's private key never reaches the network).
create table sim_counterparties (
  vasp_did text primary key references vasps (did) on delete cascade,
  did_key text not null,
  private_key_hex text not null,
  default_behaviour jsonb not null,
  behaviours jsonb not null default '{}',
  updated_at timestamptz not null default now()
);

-- What the simulated counterparties will do, and when: polled like the webhook outbox.
create table sim_counterparty_tasks (
  id bigserial primary key,
  vasp_did text not null,
  transaction_id uuid not null,
  kind text not null check (kind in ('receive', 'act')),
  action text,
  due_at timestamptz not null default now(),
  done_at timestamptz,
  outcome text
);
create index sim_counterparty_tasks_due_idx on sim_counterparty_tasks (due_at) where done_at is null;

-- What a simulated counterparty made of the personal data it received (never the data itself).
create table sim_counterparty_received (
  vasp_did text not null,
  transaction_id uuid not null,
  mode text not null,
  decrypted boolean not null,
  fields integer not null,
  error text,
  received_at timestamptz not null default now(),
  primary key (vasp_did, transaction_id)
);

-- Down Migration
drop table sim_counterparty_received;
drop table sim_counterparty_tasks;
drop table sim_counterparties;
drop table webhook_deliveries;
drop table webhooks;
drop table pii_owners;
drop table pii_items;
drop table transaction_ref_claims;
drop table transactions;
