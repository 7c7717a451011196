/** The SQL of the network directory: VASPs, their profile fields' histories and their settings. */
import type { Pool, PoolClient } from 'pg';

export type Db = Pool | PoolClient;

export interface VaspRow {
  did: string;
  name: string;
  parent_did: string | null;
  created_at: Date;
  has_admin: boolean;
  is_gateway: boolean;
}

const VASP_SELECT = `
  select v.did, v.name, v.parent_did, v.created_at,
    exists (select 1 from user_roles r where r.vasp_did = v.did or r.vasp_did = v.parent_did) as has_admin,
    exists (select 1 from vasps c where c.parent_did = v.did) as is_gateway
  from vasps v`;

export async function vaspRow(db: Db, did: string): Promise<VaspRow | undefined> {
  const { rows } = await db.query<VaspRow>(`${VASP_SELECT} where v.did = $1`, [did]);
  return rows[0];
}

/** Adds the VASP to the directory, or changes its name, gateway and simulated mark (the seed's part of a VASP). */
export async function upsertVasp(
  db: Db,
  v: { did: string; name: string; parentDid: string | null; simulated: boolean },
): Promise<void> {
  await db.query(
    `insert into vasps (did, name, parent_did, simulated) values ($1, $2, $3, $4)
     on conflict (did) do update set name = excluded.name, parent_did = excluded.parent_did, simulated = excluded.simulated`,
    [v.did, v.name, v.parentDid, v.simulated],
  );
}

export async function vaspExists(db: Db, did: string): Promise<boolean> {
  return ((await db.query('select 1 from vasps where did = $1', [did])).rowCount ?? 0) > 0;
}

export async function vaspName(db: Db, did: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>('select name from vasps where did = $1', [did]);
  return rows[0]?.name;
}

/** Whether the seed marks the VASP simulated (undefined: no such VASP). */
export async function vaspSimulated(db: Db, did: string): Promise<boolean | undefined> {
  const { rows } = await db.query<{ simulated: boolean }>('select simulated from vasps where did = $1', [did]);
  return rows[0]?.simulated;
}

/** The VASP's gateway; null for a VASP without one and for an unknown VASP. */
export async function gatewayOf(db: Db, did: string): Promise<string | null> {
  const { rows } = await db.query<{ parent_did: string | null }>('select parent_did from vasps where did = $1', [did]);
  return rows[0]?.parent_did ?? null;
}

/** The gateway's subsidiaries, oldest first. */
export async function subsidiariesOf(db: Db, gateway: string): Promise<string[]> {
  const { rows } = await db.query<{ did: string }>(
    'select did from vasps where parent_did = $1 order by created_at, did',
    [gateway],
  );
  return rows.map((r) => r.did);
}

/** The name of `did` when it is a subsidiary of `gateway` (undefined otherwise). */
export async function subsidiaryName(db: Db, did: string, gateway: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>('select name from vasps where did = $1 and parent_did = $2', [
    did,
    gateway,
  ]);
  return rows[0]?.name;
}

export interface ValueRow {
  vasp_did: string;
  field_name: string;
  value: unknown;
  issuer: string;
  issued_at: Date;
}

/** All field values of the given VASPs, newest first per field. */
export async function valuesOf(db: Db, dids: string[]): Promise<Map<string, Map<string, ValueRow[]>>> {
  const out = new Map<string, Map<string, ValueRow[]>>();
  if (dids.length === 0) return out;
  const { rows } = await db.query<ValueRow>(
    `select vasp_did, field_name, value, issuer, issued_at from vasp_field_values
     where vasp_did = any($1) order by vasp_did, field_name, id desc`,
    [dids],
  );
  for (const row of rows) {
    const fields = out.get(row.vasp_did) ?? new Map<string, ValueRow[]>();
    const list = fields.get(row.field_name) ?? [];
    list.push(row);
    fields.set(row.field_name, list);
    out.set(row.vasp_did, fields);
  }
  return out;
}

export type ListingType = 'exclude_subsidiaries' | 'exclude_gateways' | 'all';

/** Fields the listing can be ordered by, and their columns. */
export const ORDERABLE: Record<string, string> = { name: 'v.name', did: 'v.did', createdAt: 'v.created_at' };

export interface VaspListing {
  page: number;
  perPage: number;
  /** Validated `field:ASC|DESC` terms; see ORDERABLE. */
  order: { column: string; direction: 'ASC' | 'DESC'; nulls?: 'FIRST' | 'LAST' }[];
  q?: string;
  listingType: ListingType;
  /** Only the VASPs `vaspDid` reviewed (vasp_reviews), with `reviewValue` when given. */
  reviewedBy?: { vaspDid: string; reviewValue?: string };
}

/** One page of the directory's VASPs and how many match in all. */
export async function listVaspRows(db: Db, query: VaspListing): Promise<{ rows: VaspRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.q) {
    params.push(`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`(v.name ilike $${params.length} or v.did ilike $${params.length}
      or exists (select 1 from vasp_field_values f where f.vasp_did = v.did and f.field_name = 'name'
                 and f.value #>> '{}' ilike $${params.length}))`);
  }
  if (query.reviewedBy) {
    params.push(query.reviewedBy.vaspDid, query.reviewedBy.reviewValue ?? null);
    where.push(`exists (select 1 from vasp_reviews rv where rv.vasp_did = $${params.length - 1}
      and rv.reviewed_vasp_did = v.did and ($${params.length}::text is null or rv.review_value = $${params.length}))`);
  }
  // Nested VASPs: originators see only the parent, so the default listing leaves subsidiaries out.
  if (query.listingType === 'exclude_subsidiaries') where.push('v.parent_did is null');
  if (query.listingType === 'exclude_gateways')
    where.push('not exists (select 1 from vasps c where c.parent_did = v.did)');
  const filter = where.length ? `where ${where.join(' and ')}` : '';
  const orderBy = [
    ...query.order.map((o) => `${ORDERABLE[o.column]} ${o.direction}${o.nulls ? ` nulls ${o.nulls}` : ''}`),
    'v.did asc',
  ].join(', ');
  const total = await db.query<{ n: number }>(`select count(*)::int as n from vasps v ${filter}`, params);
  params.push(query.perPage, query.page * query.perPage);
  const { rows } = await db.query<VaspRow>(
    `${VASP_SELECT} ${filter} order by ${orderBy} limit $${params.length - 1} offset $${params.length}`,
    params,
  );
  return { rows, total: total.rows[0]!.n };
}

/** Adds new values to the fields' histories; the first value given becomes the current one. */
export async function addFieldValues(
  client: PoolClient,
  did: string,
  fields: readonly { fieldName: string; values: readonly { value: unknown }[] }[],
  issuer: string,
): Promise<void> {
  for (const field of fields) {
    // Insert in reverse, so that reading newest first returns the values in the order they were given.
    for (const { value } of [...field.values].reverse()) {
      await client.query(
        'insert into vasp_field_values (vasp_did, field_name, value, issuer) values ($1, $2, $3, $4)',
        [did, field.fieldName, JSON.stringify(value), issuer],
      );
    }
  }
}

/** A profile update's values, all or none. */
export async function updateProfile(
  pool: Pool,
  did: string,
  fields: readonly { fieldName: string; values: readonly { value: unknown }[] }[],
  issuer: string,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await addFieldValues(client, did, fields, issuer);
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

export interface SettingsRow {
  autoconfirm: boolean;
  autoredirect: boolean;
  vasp_discoverability: boolean;
  status_to_process_blockchain: 'CREATED' | 'SENT' | 'ACK' | 'ACCEPTED' | null;
}

export async function readSettings(db: Db, did: string): Promise<SettingsRow | undefined> {
  const { rows } = await db.query<SettingsRow>('select * from vasp_settings where vasp_did = $1', [did]);
  return rows[0];
}

/**
 * Applies the settings that were sent (null: not sent); the others keep their value (or default). One statement, so
 * concurrent updates of different settings do not overwrite each other.
 */
export async function upsertSettings(
  db: Db,
  did: string,
  patch: {
    autoconfirm: boolean | null;
    autoredirect: boolean | null;
    vaspDiscoverability: boolean | null;
    status: string | null;
    setsStatus: boolean;
  },
): Promise<SettingsRow> {
  const { rows } = await db.query<SettingsRow>(
    `insert into vasp_settings (vasp_did, autoconfirm, autoredirect, vasp_discoverability, status_to_process_blockchain)
     values ($1, coalesce($2, true), coalesce($3, true), coalesce($4, true), $5::text)
     on conflict (vasp_did) do update set
       autoconfirm = coalesce($2, vasp_settings.autoconfirm),
       autoredirect = coalesce($3, vasp_settings.autoredirect),
       vasp_discoverability = coalesce($4, vasp_settings.vasp_discoverability),
       status_to_process_blockchain = case when $6 then $5::text else vasp_settings.status_to_process_blockchain end,
       updated_at = now()
     returning *`,
    [did, patch.autoconfirm, patch.autoredirect, patch.vaspDiscoverability, patch.status, patch.setsStatus],
  );
  return rows[0]!;
}
