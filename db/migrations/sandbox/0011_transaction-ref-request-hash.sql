-- Up Migration
-- The SHA-256 of the request that claimed a transactionRef: a repeat with another body is refused (422), the same
-- body answers the transaction it made. Claims made before this column have none and are taken as matching.
alter table transaction_ref_claims add column request_hash text;

-- Down Migration
alter table transaction_ref_claims drop column request_hash;
