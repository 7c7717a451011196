-- Up Migration
-- tx/notify (sandbox/transactions/notify.ts): the beneficiary reports a deposit; with no matching message the network
-- stores an INCOMPLETE one holding the blockchain data only, whose originator VASP may be unknown.
alter table transactions alter column originator_vasp_did drop not null;
-- The two lookups of the matching: by txHash (hex compared in any case), and by destination within the time window.
create index transactions_beneficiary_tx_hash_idx
  on transactions (beneficiary_vasp_did, lower(body -> 'transactionBlockchainInfo' ->> 'txHash'))
  where coalesce(body -> 'transactionBlockchainInfo' ->> 'txHash', '') <> '';
create index transactions_beneficiary_destination_idx
  on transactions (beneficiary_vasp_did, (body -> 'transactionBlockchainInfo' ->> 'destination'), created_at);

-- A simulated counterparty as the originator of deposits the beneficiary notifies: per destination address, how many
-- seconds after the notification it completes the INCOMPLETE message (a number), or that it never does ("never").
alter table sim_counterparties add column deposits jsonb not null default '{}';
alter table sim_counterparty_tasks drop constraint sim_counterparty_tasks_kind_check;
alter table sim_counterparty_tasks add constraint sim_counterparty_tasks_kind_check
  check (kind in ('receive', 'act', 'answerDeposit'));

-- Down Migration
delete from sim_counterparty_tasks where kind = 'answerDeposit';
alter table sim_counterparty_tasks drop constraint sim_counterparty_tasks_kind_check;
alter table sim_counterparty_tasks add constraint sim_counterparty_tasks_kind_check check (kind in ('receive', 'act'));
alter table sim_counterparties drop column deposits;
drop index transactions_beneficiary_destination_idx;
drop index transactions_beneficiary_tx_hash_idx;
delete from transactions where originator_vasp_did is null;
alter table transactions alter column originator_vasp_did set not null;
