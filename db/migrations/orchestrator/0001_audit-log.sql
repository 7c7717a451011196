-- Up Migration
-- Who did what to which subject, for the regulator's questions. Rows are only ever inserted.
create table audit_log (
  id bigserial primary key,
  at timestamptz not null default now(),
  actor text not null,
  action text not null,
  subject text not null,
  details jsonb not null default '{}'::jsonb
);
create index audit_log_subject_idx on audit_log (subject, at);

-- Down Migration
drop table audit_log;
