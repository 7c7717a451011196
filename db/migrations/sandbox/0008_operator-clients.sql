-- Up Migration
-- The sandbox's stand-in for a company's identity provider: OAuth clients that receive the orchestrator's operator
-- tokens (client credentials, ES256, published through an OIDC discovery document and JWKS under /oidc).
create table operator_clients (
  client_id text primary key,
  secret_sha256 bytea not null,
  subject text not null,
  name text not null,
  email text,
  roles text[] not null
);

-- Down Migration
drop table operator_clients;
