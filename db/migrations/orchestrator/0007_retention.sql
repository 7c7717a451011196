-- Up Migration
-- Data retention (the nightly retentionSweep workflow). An outgoing transfer's sealed request is erased by
-- crypto-shredding once its retention period is over: the wrapped data key and the ciphertext become NULL, so the
-- personal data cannot be recovered from the row or from any backup taken afterwards. The non-personal metadata (source,
-- originator VASP, the CIDs tree, the network's transaction id) stays, so a webhook about the transaction still finds
-- its transfer.
alter table outgoing_transfers
  add column pii_erased_at timestamptz,
  alter column wrapped_data_key drop not null,
  alter column sealed_request drop not null,
  add constraint outgoing_transfers_erasure_check check (
    (pii_erased_at is null and wrapped_data_key is not null and sealed_request is not null)
    or (pii_erased_at is not null and wrapped_data_key is null and sealed_request is null)
  );
-- The sweep walks these in batches; without them every batch would scan the whole table.
create index outgoing_transfers_unerased_created_idx on outgoing_transfers (created_at) where pii_erased_at is null;
create index received_webhooks_received_at_idx on received_webhooks (received_at);

-- Down Migration
-- Erased requests cannot come back: their rows get empty bytes, which no key opens, to satisfy NOT NULL again.
drop index received_webhooks_received_at_idx;
drop index outgoing_transfers_unerased_created_idx;
alter table outgoing_transfers drop constraint outgoing_transfers_erasure_check;
update outgoing_transfers set wrapped_data_key = '\x'::bytea, sealed_request = '\x'::bytea where pii_erased_at is not null;
alter table outgoing_transfers
  alter column wrapped_data_key set not null,
  alter column sealed_request set not null,
  drop column pii_erased_at;
