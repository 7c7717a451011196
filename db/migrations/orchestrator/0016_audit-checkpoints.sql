-- Up Migration
-- Signed checkpoints of the audit chains' heads (lib/audit/checkpoint.ts): numbered 1, 2, … with no gap, each every
-- chain's head at one moment and an HMAC under a key from the configuration (AUDIT_CHECKPOINT_KEYS) that the database
-- does not hold. `audit verify` compares the chains with them. Append-only, like the log itself.
create table audit_checkpoints (
  seq bigint primary key,
  at timestamptz not null,
  -- [{chain, seq, hash}] in chain order, as signed.
  heads jsonb not null,
  key_id text not null,
  mac text not null
);
create trigger audit_checkpoints_append_only before update or delete on audit_checkpoints
  for each row execute function audit_log_refuse_change();
create trigger audit_checkpoints_no_truncate before truncate on audit_checkpoints
  for each statement execute function audit_log_refuse_change();
do $$
begin
  execute format('revoke update, delete, truncate on audit_checkpoints from %I', (select pg_get_userbyid(relowner) from pg_class where oid = 'audit_checkpoints'::regclass));
end;
$$;

-- Down Migration
drop table audit_checkpoints;
