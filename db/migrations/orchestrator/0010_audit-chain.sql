-- Up Migration
-- The audit log becomes a hash chain per group of actions (lib/audit/chain.ts): each row's hash covers its fields and
-- the previous row's hash, so a changed or deleted row shows. The rows already there are chained here, in id order.
alter table audit_log
  -- Byte order ("C"): the chains are read in the order of their index, and named in reports the same way everywhere.
  add column chain text collate "C",
  add column seq bigint,
  add column prev_hash text,
  add column hash text,
  -- An activity's write names its workflow run and activity: a retry finds its row instead of appending another.
  add column idempotency_key text;

-- Where each chain ends. Appending locks its chain's row, so appends from every process serialise per
-- chain; `audit verify` also compares it with the last row, which shows rows deleted from the end.
create table audit_chain_heads (
  chain text collate "C" primary key,
  seq bigint not null,
  hash text not null,
  updated_at timestamptz not null default now()
);

-- The canonical JSON of lib/audit/chain.ts, for the rows chained here (the application computes it from then on).
-- Numbers go through float8 as JavaScript reads them, printed as JavaScript prints them.
create function audit_canonical_json(j jsonb) returns text language plpgsql immutable
  set extra_float_digits = 1
as $$
declare
  kind text := jsonb_typeof(j);
  out text;
  k text;
  f float8;
begin
  if kind = 'object' then
    select '{' || coalesce(string_agg(to_json(e.key)::text || ':' || audit_canonical_json(e.value), ',' order by e.key collate "C"), '') || '}'
      into out from jsonb_each(j) e;
    return out;
  elsif kind = 'array' then
    select '[' || coalesce(string_agg(audit_canonical_json(a.value), ',' order by a.n), '') || ']'
      into out from jsonb_array_elements(j) with ordinality a(value, n);
    return out;
  elsif kind = 'number' then
    f := (j::text)::float8;
    if f <> 0 and (abs(f) >= 1e21 or abs(f) < 1e-6) then
      -- JavaScript's exponent form: 1e+21, 1.5e-7 (PostgreSQL writes 1.5e-07).
      return regexp_replace(f::text, 'e([+-])0*([0-9])', 'e\1\2');
    end if;
    return (f::text)::numeric::text;
  else
    return j::text;
  end if;
end;
$$;

do $$
declare
  r record;
  prev text;
  last_chain text;
  n bigint;
  h text;
begin
  for r in
    select id, split_part(action, '.', 1) as chain, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at_text,
           actor, action, subject, details
      from audit_log order by split_part(action, '.', 1) collate "C", id
  loop
    if last_chain is distinct from r.chain then
      if last_chain is not null then
        insert into audit_chain_heads (chain, seq, hash) values (last_chain, n, prev);
      end if;
      last_chain := r.chain;
      n := 0;
      prev := repeat('0', 64);
    end if;
    n := n + 1;
    h := encode(sha256(convert_to(audit_canonical_json(jsonb_build_object(
      'v', 1, 'chain', r.chain, 'seq', n, 'at', r.at_text, 'actor', r.actor, 'action', r.action, 'subject', r.subject,
      'details', r.details, 'prevHash', prev)), 'UTF8')), 'hex');
    update audit_log set chain = r.chain, seq = n, prev_hash = prev, hash = h where id = r.id;
    prev := h;
  end loop;
  if last_chain is not null then
    insert into audit_chain_heads (chain, seq, hash) values (last_chain, n, prev);
  end if;
end;
$$;

drop function audit_canonical_json(jsonb);

alter table audit_log
  alter column chain set not null,
  alter column seq set not null,
  alter column prev_hash set not null,
  alter column hash set not null;
create unique index audit_log_chain_seq_idx on audit_log (chain, seq);
create unique index audit_log_idempotency_key_idx on audit_log (idempotency_key) where idempotency_key is not null;
-- The export's range scan.
create index audit_log_at_idx on audit_log (at);

-- Down Migration
drop index audit_log_at_idx;
drop table audit_chain_heads;
alter table audit_log drop column chain, drop column seq, drop column prev_hash, drop column hash, drop column idempotency_key;
