-- Up Migration
-- Workflows waiting for a wallet's ownership proof (wallet-proofs/store.ts): an outgoing transfer to a self-hosted
-- wallet held in AWAITING_PROOF registers here by (asset, address); when a proof of that wallet is VERIFIED, the
-- wallet-proof workflow signals every waiter (walletProofVerifiedSignal) and removes the rows. A lost signal is
-- covered by the waiter's own periodic re-check, so a row is a wake-up hint, never the only record.
create table wallet_proof_waiters (
  asset text not null,
  address text not null,
  workflow_id text not null,
  created_at timestamptz not null default clock_timestamp(),
  primary key (asset, address, workflow_id)
);
-- Whether a wallet was proven at all (the address lookup of a transfer's classification), whoever proved it.
create index wallet_proofs_verified_wallet on wallet_proofs (address, asset) where status = 'VERIFIED';

-- Down Migration
drop index wallet_proofs_verified_wallet;
drop table wallet_proof_waiters;
