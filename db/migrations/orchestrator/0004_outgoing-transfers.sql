-- Up Migration
-- Outgoing transfers (issue #5). The caller's request, IVMS101 included, is kept here sealed rather than passed
-- through workflow history: the workflow gets only `id` and non-personal metadata, and the activities read the
-- request back by id. Sealing is envelope encryption with the keystore's KeyWrapper: AES-256-GCM under a random data
-- key per row (bound to the row id through the associated data), the data key wrapped under the master key.
create table outgoing_transfers (
  -- The idempotency key (`Idempotency-Key`, or the agent's transactionRef); the workflow id is `outgoing-<id>` and the
  -- network's transactionRef is `<id>`, so a retried activity can never create a second transaction.
  id text primary key,
  source text not null check (source in ('api', 'agent')),
  originator_vasp_did text not null,
  wrapping_key_id text not null,
  wrapped_data_key bytea not null,
  sealed_request bytea not null,
  -- The encrypted form once stored at the personal-data service: the IVMS101-shaped tree of CIDs the network takes as
  -- `pii` (CIDs are identifiers, not personal data), with the mode and recipients used. Written once; a retried
  -- activity reuses it instead of storing the data again.
  pii jsonb,
  pii_mode text,
  pii_recipients text[],
  -- The network's transaction, once created.
  transaction_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index outgoing_transfers_transaction_idx on outgoing_transfers (transaction_id) where transaction_id is not null;

-- Every notification webhook delivery, by its delivery id (svix-id / webhook-id): the network delivers at least once,
-- so a repeated id is acknowledged and ignored. `outcome` says what was done with it.
create table received_webhooks (
  webhook_id text primary key,
  received_at timestamptz not null default now(),
  endpoint text not null,
  message_type text,
  transaction_id text,
  transaction_ref text,
  status text,
  originator_vasp_did text,
  beneficiary_vasp_did text,
  -- signalled: passed to the outgoing transfer's workflow; late: that workflow had already finished;
  -- not-ours: a transaction this system did not originate (recorded only; incoming routing is a later issue).
  outcome text not null
);
create index received_webhooks_transaction_idx on received_webhooks (transaction_id, received_at);

-- Down Migration
drop table received_webhooks;
drop table outgoing_transfers;
