-- Up Migration
-- Applications that sign operators in at the sandbox's identity provider with the authorization code flow and PKCE
-- (public clients, no secret: the orchestrator's console). A code is only sent to a registered redirect URI.
create table operator_apps (
  client_id text primary key,
  redirect_uris text[] not null
);

-- Down Migration
drop table operator_apps;
