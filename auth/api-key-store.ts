import type { Pool, PoolClient } from 'pg';
import { auditActor, type Principal, type Role } from '../lib/principal';
import { NotFoundError } from '../lib/errors';
import { withTransaction } from '../db/transaction';
import { appendAuditEntry } from '../audit/store';

/** An API key as lists show it: never its hash. */
export interface ApiKeyInfo {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  createdAt: string;
  /** Who created it, by the stable id the audit log records (lib/principal.ts auditActor). */
  createdBy: string;
  /** For display: the creator's name when it was created. */
  createdByName: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  revokedByName: string | null;
  lastUsedAt: string | null;
}

/** What authentication needs of a key. */
export interface ApiKeyCredential {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  secretSha256: Buffer;
  revoked: boolean;
}

interface Row {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  created_at: Date;
  created_by: string;
  created_by_name: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoked_by_name: string | null;
  last_used_at: Date | null;
}

const COLUMNS =
  'id, prefix, name, role, created_at, created_by, created_by_name, revoked_at, revoked_by, revoked_by_name, last_used_at';
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toInfo = (r: Row): ApiKeyInfo => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  role: r.role,
  createdAt: r.created_at.toISOString(),
  createdBy: r.created_by,
  createdByName: r.created_by_name,
  revokedAt: iso(r.revoked_at),
  revokedBy: r.revoked_by,
  revokedByName: r.revoked_by_name,
  lastUsedAt: iso(r.last_used_at),
});

async function audit(db: PoolClient, principal: Principal, action: string, key: ApiKeyInfo): Promise<void> {
  await appendAuditEntry(db, {
    actor: auditActor(principal),
    action,
    subject: key.prefix,
    details: { principal, apiKey: { id: key.id, name: key.name, role: key.role } },
  });
}

/** Stores a new key (its hash only) and audits its creation, in one transaction. */
export async function insertApiKey(
  pool: Pool,
  key: { id: string; prefix: string; name: string; role: Role; secretSha256: Buffer },
  by: Principal,
): Promise<ApiKeyInfo> {
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<Row>(
      `insert into api_keys (id, prefix, name, role, secret_sha256, created_by, created_by_name) values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
      [key.id, key.prefix, key.name, key.role, key.secretSha256, auditActor(by), by.name],
    );
    const info = toInfo(rows[0]!);
    await audit(db, by, 'api-key.create', info);
    return info;
  });
}

export async function listApiKeys(pool: Pool, opts: { includeRevoked: boolean }): Promise<ApiKeyInfo[]> {
  const { rows } = await pool.query<Row>(
    `select ${COLUMNS} from api_keys ${opts.includeRevoked ? '' : 'where revoked_at is null'} order by created_at desc, id`,
  );
  return rows.map(toInfo);
}

export async function findApiKeyCredential(pool: Pool, prefix: string): Promise<ApiKeyCredential | undefined> {
  const { rows } = await pool.query<{
    id: string;
    prefix: string;
    name: string;
    role: Role;
    secret_sha256: Buffer;
    revoked_at: Date | null;
  }>('select id, prefix, name, role, secret_sha256, revoked_at from api_keys where prefix = $1', [prefix]);
  const r = rows[0];
  return (
    r && {
      id: r.id,
      prefix: r.prefix,
      name: r.name,
      role: r.role,
      secretSha256: r.secret_sha256,
      revoked: r.revoked_at !== null,
    }
  );
}

/**
 * Revokes a key named by its id or its prefix, and audits it; revoking a revoked key changes nothing. The key stops
 * working at once: authentication reads the row on every request.
 */
export async function revokeApiKey(pool: Pool, idOrPrefix: string, by: Principal): Promise<ApiKeyInfo> {
  return withTransaction(pool, async (db) => {
    const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix);
    const { rows } = await db.query<Row>(
      `select ${COLUMNS} from api_keys where ${isId ? 'id = $1::uuid' : 'prefix = $1'} for update`,
      [idOrPrefix],
    );
    const row = rows[0];
    if (!row)
      throw new NotFoundError(`no API key ${idOrPrefix}`, {
        field: 'key',
        rule: 'must be the id or the prefix (tro_…) of an API key',
      });
    if (row.revoked_at) return toInfo(row);
    const updated = await db.query<Row>(
      `update api_keys set revoked_at = now(), revoked_by = $2, revoked_by_name = $3 where id = $1 returning ${COLUMNS}`,
      [row.id, auditActor(by), by.name],
    );
    const info = toInfo(updated.rows[0]!);
    await audit(db, by, 'api-key.revoke', info);
    return info;
  });
}

export async function recordApiKeyUse(pool: Pool, id: string, at: Date): Promise<void> {
  await pool.query(
    'update api_keys set last_used_at = $2 where id = $1 and (last_used_at is null or last_used_at < $2)',
    [id, at],
  );
}
