-- Up Migration
-- One decision per transfer, direction and kind (active or shadow): a retried step records its decision again in place,
-- so the row is the decision the workflow acted on, and shadow comparisons count each transfer once.
create unique index policy_decisions_once on policy_decisions (transfer_id, direction, shadow);

-- Down Migration
drop index policy_decisions_once;
