-- Up Migration
-- Counterparty due diligence (counterparties/store.ts): one review per (scope, counterparty VASP). The scope is a
-- subsidiary's DID for its override, or '*' for the group's review; a subsidiary's row wins over the group's.
create table counterparty_reviews (
  scope text not null,
  vasp_did text not null,
  review_value text not null check (review_value in ('TRUSTED', 'BLOCKED', 'MANUAL')),
  note text not null default '' check (char_length(note) <= 2000),
  -- The principal's stable id (lib/principal.ts auditActor), and its name at the time for display.
  reviewed_by text not null,
  reviewed_by_name text,
  reviewed_at timestamptz not null default clock_timestamp(),
  due_at timestamptz,
  -- ISO 3166-1 alpha-2: the counterparty's incorporation country when reviewed.
  jurisdiction text check (jurisdiction ~ '^[A-Z]{2}$'),
  primary key (scope, vasp_did)
);
-- The effective review of one counterparty reads the group's and one subsidiary's rows through this index.
create index counterparty_reviews_vasp on counterparty_reviews (vasp_did, scope);
create index counterparty_reviews_due on counterparty_reviews (due_at) where due_at is not null;
create index counterparty_reviews_listing on counterparty_reviews (reviewed_at, vasp_did, scope);

-- What the network should hold: the review each of the group's VASPs (the gateway, each subsidiary) publishes for a
-- counterparty (`POST /tf/vasps/{vaspDID}/review`), and whether it got there. Written with the review; the push after
-- the answer and the nightly reconciliation (workflows/counterparty-review-sync.ts) send what is pending.
create table counterparty_review_pushes (
  vasp_did text not null,
  reviewed_vasp_did text not null,
  review_value text not null check (review_value in ('TRUSTED', 'BLOCKED', 'MANUAL')),
  note text not null default '',
  state text not null check (state in ('pending', 'pushed', 'failed')),
  attempts integer not null default 0,
  last_error text,
  updated_at timestamptz not null default clock_timestamp(),
  pushed_at timestamptz,
  primary key (vasp_did, reviewed_vasp_did)
);
create index counterparty_review_pushes_pending on counterparty_review_pushes (updated_at) where state <> 'pushed';

-- Down Migration
drop table counterparty_review_pushes;
drop table counterparty_reviews;
