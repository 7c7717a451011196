-- Up Migration
-- The encrypted personal data of an outgoing transfer as it is sent to the personal-data service, kept from before the
-- put until the network's transaction exists: a retry after a crash between the put and recording its CIDs sends the
-- same bytes, which the content-addressed store keeps once, instead of encrypting (and storing) the data again.
-- Ciphertext only (JWE to the recipients); erased with the request by the retention sweep.
alter table outgoing_transfers add column pii_entries jsonb;

-- Down Migration
alter table outgoing_transfers drop column pii_entries;
