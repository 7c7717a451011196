-- Up Migration
-- A deposit from a self-hosted wallet above the receiving subsidiary's proof threshold waits for the customer's
-- ownership proof of the sending wallet (AWAITING_PROOF, deposits/deposits.ts). customer_ref: the receiving customer,
-- an opaque reference (the wallet proofs' rule), whose VERIFIED proof releases it; proof_required: decided at intake.
alter table deposits drop constraint deposits_status_check;
alter table deposits add constraint deposits_status_check
  check (status in ('HELD', 'AWAITING_DATA', 'AWAITING_PROOF', 'RELEASED', 'RETURN_REQUIRED'));
alter table deposits add column customer_ref text;
alter table deposits add column proof_required boolean not null default false;

-- Down Migration
alter table deposits drop column proof_required;
alter table deposits drop column customer_ref;
alter table deposits drop constraint deposits_status_check;
alter table deposits add constraint deposits_status_check
  check (status in ('HELD', 'AWAITING_DATA', 'RELEASED', 'RETURN_REQUIRED'));
