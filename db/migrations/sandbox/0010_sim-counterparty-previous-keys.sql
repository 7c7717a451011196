-- Up Migration
-- A simulated counterparty that rotated its pii_didkey (the keyRotation fault) keeps its earlier keys, as a VASP
-- must for data already encrypted to them: [{did, privateKeyHex}], oldest first.
alter table sim_counterparties add column previous_keys jsonb not null default '[]';

-- Down Migration
alter table sim_counterparties drop column previous_keys;
