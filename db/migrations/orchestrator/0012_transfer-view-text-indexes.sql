-- Up Migration
-- Free text searched the transaction id and the reference joined in one column, so a term's trigrams could come from
-- both: "ref-12" took its "12" from transaction ids and rechecked ~11,000 false candidates, one heap page each.
-- One trigram index per field keeps each term's candidates to the field that holds it.
drop index transfer_view_search_idx;
alter table transfer_view drop column search;
create index transfer_view_transaction_id_text_idx on transfer_view using gin (lower(transaction_id) public.gin_trgm_ops);
create index transfer_view_reference_text_idx on transfer_view using gin (lower(reference) public.gin_trgm_ops);

-- Down Migration
drop index transfer_view_reference_text_idx;
drop index transfer_view_transaction_id_text_idx;
alter table transfer_view add column search text generated always as (lower(coalesce(transaction_id, '') || ' ' || coalesce(reference, ''))) stored;
create index transfer_view_search_idx on transfer_view using gin (search public.gin_trgm_ops);
