/** The SQL of the sandbox's authentication: users and their roles, API clients, operators, apps and service secrets. */
import type { Pool, PoolClient } from 'pg';

/**
 * A secret the sandbox generates once and keeps in its schema (signing keys and the like): `fresh` is stored when the
 * name has none yet, and whichever value won (another process may have stored one first) is returned.
 */
export async function serviceSecret(pool: Pool, name: string, fresh: Buffer): Promise<Buffer> {
  await pool.query('insert into service_secrets (name, value) values ($1, $2) on conflict (name) do nothing', [
    name,
    fresh,
  ]);
  const { rows } = await pool.query<{ value: Buffer }>('select value from service_secrets where name = $1', [name]);
  return rows[0]!.value;
}

/** A user's roles, and every VASP of the directory with its gateway: what Access is built from. */
export async function readAccessRows(
  pool: Pool,
  userDid: string,
): Promise<{
  roles: { vasp_did: string; permissions: string[] }[];
  vasps: { did: string; parent_did: string | null }[];
}> {
  const roles = await pool.query<{ vasp_did: string; permissions: string[] }>(
    'select vasp_did, permissions from user_roles where user_did = $1',
    [userDid],
  );
  const vasps = await pool.query<{ did: string; parent_did: string | null }>('select did, parent_did from vasps');
  return { roles: roles.rows, vasps: vasps.rows };
}

/** The first (by DID) of the users acting for the VASP: whom a simulated VASP acts as. */
export async function firstUserOf(pool: Pool, vaspDid: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ user_did: string }>(
    'select user_did from user_roles where vasp_did = $1 order by user_did limit 1',
    [vaspDid],
  );
  return rows[0]?.user_did;
}

/** The seed's writes: each adds the row or replaces what the seed says of it. */
export async function upsertUser(
  client: PoolClient,
  u: { did: string; name: string; email: string; role: string; jobTitle: string },
): Promise<void> {
  await client.query(
    `insert into users (did, name, email, role, job_title) values ($1, $2, $3, $4, $5)
     on conflict (did) do update set name = excluded.name, email = excluded.email, role = excluded.role,
       job_title = excluded.job_title`,
    [u.did, u.name, u.email, u.role, u.jobTitle],
  );
}

export async function replaceUserRoles(
  client: PoolClient,
  userDid: string,
  roles: readonly { vaspDID: string; permissions: string[] }[],
): Promise<void> {
  await client.query('delete from user_roles where user_did = $1', [userDid]);
  for (const r of roles) {
    await client.query('insert into user_roles (user_did, vasp_did, permissions) values ($1, $2, $3)', [
      userDid,
      r.vaspDID,
      r.permissions,
    ]);
  }
}

export async function upsertApiClient(
  client: PoolClient,
  clientId: string,
  secretSha256: Buffer,
  userDid: string,
): Promise<void> {
  await client.query(
    `insert into api_clients (client_id, secret_sha256, user_did) values ($1, $2, $3)
     on conflict (client_id) do update set secret_sha256 = excluded.secret_sha256, user_did = excluded.user_did`,
    [clientId, secretSha256, userDid],
  );
}

export async function upsertOperatorClient(
  client: PoolClient,
  o: { clientId: string; secretSha256: Buffer; subject: string; name: string; email: string | null; roles: string[] },
): Promise<void> {
  await client.query(
    `insert into operator_clients (client_id, secret_sha256, subject, name, email, roles) values ($1, $2, $3, $4, $5, $6)
     on conflict (client_id) do update set secret_sha256 = excluded.secret_sha256, subject = excluded.subject,
       name = excluded.name, email = excluded.email, roles = excluded.roles`,
    [o.clientId, o.secretSha256, o.subject, o.name, o.email, o.roles],
  );
}

export async function upsertOperatorApp(client: PoolClient, clientId: string, redirectUris: string[]): Promise<void> {
  await client.query(
    `insert into operator_apps (client_id, redirect_uris) values ($1, $2)
     on conflict (client_id) do update set redirect_uris = excluded.redirect_uris`,
    [clientId, redirectUris],
  );
}

export interface UserRow {
  name: string;
  email: string;
  role: string;
  job_title: string;
  issued_at: Date;
}

export async function readUser(pool: Pool, userDid: string): Promise<UserRow | undefined> {
  const { rows } = await pool.query<UserRow>(
    'select name, email, role, job_title, issued_at from users where did = $1',
    [userDid],
  );
  return rows[0];
}

export async function userEmail(pool: Pool, userDid: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ email: string }>('select email from users where did = $1', [userDid]);
  return rows[0]?.email;
}

export async function readApiClient(
  pool: Pool,
  clientId: string,
): Promise<{ secret_sha256: Buffer; user_did: string } | undefined> {
  const { rows } = await pool.query<{ secret_sha256: Buffer; user_did: string }>(
    'select secret_sha256, user_did from api_clients where client_id = $1',
    [clientId],
  );
  return rows[0];
}

/** Operator clients whose id or e-mail is `username` (a few at most). */
export async function operatorClientIdsFor(pool: Pool, username: string): Promise<string[]> {
  const { rows } = await pool.query<{ client_id: string }>(
    'select client_id from operator_clients where client_id = $1 or lower(email) = lower($1) order by client_id limit 5',
    [username],
  );
  return rows.map((r) => r.client_id);
}

export interface OperatorClientRow {
  client_id: string;
  secret_sha256: Buffer;
  subject: string;
  name: string;
  email: string | null;
  roles: string[];
}

export async function readOperatorClient(pool: Pool, clientId: string): Promise<OperatorClientRow | undefined> {
  const { rows } = await pool.query<OperatorClientRow>(
    'select client_id, secret_sha256, subject, name, email, roles from operator_clients where client_id = $1',
    [clientId],
  );
  return rows[0];
}

export async function registeredRedirectUris(pool: Pool, clientId: string): Promise<string[] | undefined> {
  const { rows } = await pool.query<{ redirect_uris: string[] }>(
    'select redirect_uris from operator_apps where client_id = $1',
    [clientId],
  );
  return rows[0]?.redirect_uris;
}
