-- Up Migration
-- The audit log is append-only in the database itself, not only by the application's habit: UPDATE, DELETE and
-- TRUNCATE of its rows are refused by triggers (which bind every role, the table's owner and superusers included,
-- until someone disables them: a deliberate act, with the table owner's rights, that PostgreSQL's logs can record),
-- and the privileges to do them are revoked from every role that holds them, the owner (the application's role in
-- the compose deployment) included. Nothing in this repository changes or deletes an audit row: retention deletes
-- webhook ids and erases transfers' personal data, and records that in new rows.
create function audit_log_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only: % refused', tg_table_name, tg_op
    using errcode = 'insufficient_privilege', hint = 'audit rows are never changed or deleted; record a correction as a new row';
end;
$$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_refuse_change();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_refuse_change();

-- A chain's head only moves forward: an append advances it by one row (the same seq with another hash would be a
-- forked chain, a lower seq rows deleted from its end), locking it by rewriting updated_at alone. It is never deleted.
create function audit_chain_head_forward_only() returns trigger language plpgsql as $$
begin
  if tg_op <> 'UPDATE' then
    raise exception 'audit_chain_heads: % refused (a chain''s head is never removed)', tg_op using errcode = 'insufficient_privilege';
  end if;
  if new.chain <> old.chain or new.seq < old.seq or (new.seq = old.seq and new.hash <> old.hash) then
    raise exception 'audit_chain_heads: chain % may only move forward (seq % to %)', old.chain, old.seq, new.seq
      using errcode = 'insufficient_privilege';
  end if;
  return new;
end;
$$;
create trigger audit_chain_heads_forward_only before update or delete on audit_chain_heads
  for each row execute function audit_chain_head_forward_only();
create trigger audit_chain_heads_no_truncate before truncate on audit_chain_heads
  for each statement execute function audit_chain_head_forward_only();

-- Privileges: no role keeps UPDATE, DELETE or TRUNCATE on the log, nor DELETE or TRUNCATE on the heads (appends
-- update them). A deployment that runs the services as a role of their own, apart from the one that migrates,
-- grants that role SELECT and INSERT on audit_log and SELECT, INSERT and UPDATE on audit_chain_heads only.
do $$
declare
  r record;
begin
  for r in
    select distinct c.relname as relname,
           case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end as grantee
      from pg_class c cross join lateral aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
     where c.relnamespace = current_schema()::regnamespace and c.relname in ('audit_log', 'audit_chain_heads')
       and a.privilege_type in ('UPDATE', 'DELETE', 'TRUNCATE')
  loop
    if r.relname = 'audit_log' then
      execute format('revoke update, delete, truncate on %I from %s', r.relname, r.grantee);
    else
      execute format('revoke delete, truncate on %I from %s', r.relname, r.grantee);
    end if;
  end loop;
end;
$$;

-- Down Migration
do $$
begin
  execute format('grant update, delete, truncate on audit_log to %I', (select pg_get_userbyid(relowner) from pg_class where oid = 'audit_log'::regclass));
  execute format('grant delete, truncate on audit_chain_heads to %I', (select pg_get_userbyid(relowner) from pg_class where oid = 'audit_chain_heads'::regclass));
end;
$$;
drop trigger audit_chain_heads_no_truncate on audit_chain_heads;
drop trigger audit_chain_heads_forward_only on audit_chain_heads;
drop function audit_chain_head_forward_only();
drop trigger audit_log_no_truncate on audit_log;
drop trigger audit_log_append_only on audit_log;
drop function audit_log_refuse_change();
