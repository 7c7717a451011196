-- Up Migration
-- Ownership proofs of self-hosted wallets (wallet-proofs/store.ts), one row per proof of (customer ref, asset,
-- address). Evidence is a signature or a deposit's txHash/amount: never a private key, never personal data (the
-- customer is an opaque reference).
create table wallet_proofs (
  id text primary key,
  customer_ref text not null,
  asset text not null,
  address text not null,
  vasp_did text not null,
  method text not null check (method in ('SIGNATURE', 'SMALL_DEPOSIT', 'SCREENSHOT', 'SELF_DECLARATION')),
  scheme text check (scheme in ('EIP191', 'EIP712', 'BIP137', 'BIP322')),
  status text not null check (status in ('PENDING', 'VERIFIED', 'REJECTED', 'EXPIRED')),
  reason text,
  -- The challenge's nonce (32 bytes hex): unique, so a replayed challenge is refused.
  nonce text not null unique,
  challenge_expires_at timestamptz not null,
  -- The small-deposit test: where and how much (base units, digits) the wallet must send.
  deposit_address text,
  deposit_amount text check (deposit_amount ~ '^[0-9]+$'),
  evidence jsonb not null default '{}'::jsonb,
  created_by text not null,
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  verified_at timestamptz,
  -- Until when a VERIFIED proof is reused (WALLET_PROOF_VALID_DAYS after verification).
  expires_at timestamptz
);
-- Reuse looks up the newest verified proof of a (customer, asset, address).
create index wallet_proofs_subject on wallet_proofs (customer_ref, asset, address, status);
create index wallet_proofs_listing on wallet_proofs (created_at, id);
-- Never two open small-deposit tests with the same amount on one deposit address: the deposit could not be told apart.
create unique index wallet_proofs_open_deposit on wallet_proofs (deposit_address, deposit_amount)
  where status = 'PENDING' and deposit_address is not null;

-- Down Migration
drop table wallet_proofs;
