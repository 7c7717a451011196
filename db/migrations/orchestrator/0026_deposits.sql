-- Up Migration
-- Deposits the custody system reports (deposits/store.ts): funds that reached one of a subsidiary's addresses, held until
-- their Travel Rule data is matched and accepted. One row per on-chain output: (chain, txHash, output index) is unique,
-- which makes reporting the same deposit twice answer the first row. No personal data: addresses, amounts, the
-- network's transaction id and status.
create table deposits (
  id text primary key,
  vasp_did text not null,
  chain text not null,
  asset text not null,
  -- Lower case hex, as the chain's explorers compare it.
  tx_hash text not null,
  output_index integer not null check (output_index >= 0),
  to_address text not null,
  from_address text,
  amount text not null check (amount ~ '^[0-9]{1,78}$'),
  status text not null check (status in ('HELD', 'AWAITING_DATA', 'RELEASED', 'RETURN_REQUIRED')),
  reason text,
  -- The subsidiary's jurisdiction's classification at intake: BELOW_THRESHOLD, TRAVELRULE or UNKNOWN.
  classification text not null,
  -- The network's transaction the deposit is matched to, and its status when last read.
  transaction_id text,
  network_status text,
  -- Until when an INCOMPLETE match may wait for the originator's data (DEPOSIT_DATA_DEADLINE after the report).
  data_deadline_at timestamptz not null,
  created_by text not null,
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  decided_at timestamptz
);
create unique index deposits_onchain_idx on deposits (chain, tx_hash, output_index);
create index deposits_listing_idx on deposits (created_at, id);
create index deposits_status_idx on deposits (status, created_at, id);
create index deposits_transaction_idx on deposits (transaction_id) where transaction_id is not null;

-- Down Migration
drop table deposits;
