-- Up Migration
-- Counterparty reviews (`POST /tf/vasps/{vaspDID}/review`): one current review per (reviewer, reviewed VASP); a new
-- review replaces it. `GET /tf/simple/vasps?reviewedByVaspDID=&reviewValue=` lists the reviewed VASPs.
create table vasp_reviews (
  vasp_did text not null references vasps (did) on delete cascade,
  reviewed_vasp_did text not null references vasps (did) on delete cascade,
  review_value text not null check (review_value in ('TRUSTED', 'BLOCKED', 'MANUAL')),
  note text,
  created_at timestamptz not null default now(),
  -- The user who reviewed (the caller's DID).
  created_by text not null,
  primary key (vasp_did, reviewed_vasp_did)
);
create index vasp_reviews_reviewed on vasp_reviews (vasp_did, review_value, reviewed_vasp_did);

-- Down Migration
drop table vasp_reviews;
