-- Up Migration
-- Who created or revoked an API key is recorded by the principal's stable id (oidc:<sub>, apikey:<id>, cli:<OS user>,
-- system:<component>: lib/principal.ts auditActor), as the audit log records it; the name a person can change at the
-- identity provider is kept beside it for display only.
alter table api_keys add column created_by_name text, add column revoked_by_name text;
update api_keys set created_by_name = created_by, revoked_by_name = revoked_by;

-- Keys made before this migration named their creator and revoker by name: their stable ids are in the principal
-- their audit rows carry (api-key.create, api-key.revoke; subject the key's prefix).
with acted as (
  select distinct on (subject, action) subject, action, details->'principal' as p
    from audit_log
   where action in ('api-key.create', 'api-key.revoke') and details->'principal'->>'subject' is not null
   order by subject, action, id
), actor as (
  select subject, action,
         case
           when p->>'kind' = 'oidc' then 'oidc:' || (p->>'subject')
           when p->>'kind' = 'api-key' then 'apikey:' || (p->>'subject')
           -- The CLI was a system principal named cli:<OS user> before it had a kind of its own.
           when p->>'kind' = 'system' and starts_with(p->>'subject', 'cli:') then p->>'subject'
           when p->>'kind' = 'system' then 'system:' || (p->>'subject')
         end as id
    from acted
)
update api_keys k
   set created_by = coalesce((select id from actor where actor.subject = k.prefix and actor.action = 'api-key.create'), k.created_by),
       revoked_by = case when k.revoked_at is null then null
                         else coalesce((select id from actor where actor.subject = k.prefix and actor.action = 'api-key.revoke'), k.revoked_by) end;

-- Down Migration
update api_keys set created_by = coalesce(created_by_name, created_by), revoked_by = coalesce(revoked_by_name, revoked_by);
alter table api_keys drop column created_by_name, drop column revoked_by_name;
