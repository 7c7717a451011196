-- Up Migration
-- Incoming transfers look owners up by destination address alone (the asset the network reports can be a symbol, a
-- CAIP-19 id or absent), and the address webhook must answer within milliseconds.
create index address_registry_address_idx on address_registry (address, tag);

-- Down Migration
drop index address_registry_address_idx;
