-- Up Migration
-- A deposit's decision and its return (deposits/deposits.ts). decided_by: who made the deposit final (a compliance
-- officer's actor, or system:deposit). RETURNED: the custody system confirmed the return on chain with return_tx_hash
-- (POST /v1/deposits/:id/returned). escalated_at: a return not confirmed within 10 business days was escalated.
alter table deposits drop constraint deposits_status_check;
alter table deposits add constraint deposits_status_check
  check (status in ('HELD', 'AWAITING_DATA', 'AWAITING_PROOF', 'RELEASED', 'RETURN_REQUIRED', 'RETURNED'));
alter table deposits add column decided_by text;
alter table deposits add column return_tx_hash text;
alter table deposits add column returned_at timestamptz;
alter table deposits add column escalated_at timestamptz;

-- Down Migration
alter table deposits drop column escalated_at;
alter table deposits drop column returned_at;
alter table deposits drop column return_tx_hash;
alter table deposits drop column decided_by;
alter table deposits drop constraint deposits_status_check;
alter table deposits add constraint deposits_status_check
  check (status in ('HELD', 'AWAITING_DATA', 'AWAITING_PROOF', 'RELEASED', 'RETURN_REQUIRED'));
