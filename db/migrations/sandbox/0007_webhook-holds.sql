-- Up Migration
-- Deliveries about a transaction to one VASP can be held back (a gateway hears of an incoming message only after the
-- network's automatic routing had its turn). The dispatcher skips held deliveries; releasing the hold lets them go.
create table webhook_holds (
  transaction_id uuid not null,
  vasp_did text not null,
  created_at timestamptz not null default now(),
  primary key (transaction_id, vasp_did)
);

-- Down Migration
drop table webhook_holds;
