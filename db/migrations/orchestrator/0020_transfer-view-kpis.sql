-- Up Migration
-- What the compliance KPIs (GET /v1/kpis, transfer-view/kpis-store.ts) read from the transfer projection besides its
-- status: who decided a transfer (the policy or screening without a person, or a person) and what, and when the
-- transfer was first answered (outgoing: by the counterparty; incoming: by us), for the answer times.
alter table transfer_view add column decided_by text check (decided_by in ('system', 'person'));
alter table transfer_view add column decision_action text;
alter table transfer_view add column answered_at timestamptz;

-- Backfill what the rows tell: an incoming decision names its actor (system:* is the policy or screening); a transfer
-- already at an answer status was answered at latest at its last write (an upper bound: the only time the row keeps).
update transfer_view set
  decided_by = case when decision ->> 'actor' like 'system:%' then 'system' else 'person' end,
  decision_action = decision ->> 'decision'
where decision is not null and decision ? 'actor';
update transfer_view set answered_at = updated_at
where status in ('ACK', 'ACCEPTED', 'DECLINED', 'REJECTED', 'NOT_READY');

-- The KPIs aggregate a time range, optionally of one subsidiary and direction: index-only scans over these.
create index transfer_view_kpi_idx on transfer_view (created_at)
  include (direction, subsidiary_did, status, asset, decided_by, answered_at, transaction_id, counterparty_did);
create index transfer_view_kpi_subsidiary_idx on transfer_view (subsidiary_did, created_at)
  include (direction, status, asset, decided_by, answered_at, transaction_id, counterparty_did);

-- Down Migration
drop index transfer_view_kpi_subsidiary_idx;
drop index transfer_view_kpi_idx;
alter table transfer_view drop column answered_at;
alter table transfer_view drop column decision_action;
alter table transfer_view drop column decided_by;
