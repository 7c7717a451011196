-- Up Migration
-- One decision per transfer, direction and kind (active or shadow): a retried step records its decision again in place,
-- so the row is the decision the workflow acted on, and shadow comparisons count each transfer once.
create unique index policy_decisions_once on policy_decisions (transfer_id, direction, shadow);

-- Workers keep the reviews in memory (counterparties/review-cache.ts) and reload them when told that they changed.
create function counterparty_reviews_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('counterparty_reviews', '');
  return null;
end;
$$;
create trigger counterparty_reviews_changed after insert or update or delete or truncate on counterparty_reviews
  for each statement execute function counterparty_reviews_changed();

-- Down Migration
drop trigger counterparty_reviews_changed on counterparty_reviews;
drop function counterparty_reviews_changed();
drop index policy_decisions_once;
