-- Up Migration
-- The blockchain transaction of an outgoing transfer, once the custody system broadcast it and said so
-- (PATCH /v1/transfers/:id, issue 23 item 5); passed on to the network with tx/update. Set once: a second, different
-- hash is refused.
alter table outgoing_transfers add column tx_hash text;

-- Down Migration
alter table outgoing_transfers drop column tx_hash;
