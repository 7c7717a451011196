/**
 * The network directory's data: VASP profiles (fields with a history of values), their derived flags, the "simple"
 * view the public directory answers with, and VASP settings. Shapes follow the network's v1 OpenAPI (tf_VASPInfo,
 * tf_VASPInfoSimple, tf_VASPListSimple, Settings).
 */
import type { Pool, PoolClient } from 'pg';
import { OPERATOR_DID } from '../operator';

export interface FieldValue {
  value: unknown;
  issuer: string;
  issuanceDate: string;
  expirationDate: string | null;
}

export interface ProfileField {
  fieldName: string;
  values: FieldValue[];
}

interface VaspRow {
  did: string;
  name: string;
  parent_did: string | null;
  created_at: Date;
  has_admin: boolean;
  is_gateway: boolean;
}

export interface VaspFlags {
  hasAdmin: boolean;
  isActiveSender: boolean;
  isActiveReceiver: boolean;
  isNotifiable: boolean;
}

/**
 * Flags the network derives. Choices (no public source settles them): a VASP "has an admin" when some user holds a
 * role on it or on its gateway; such a VASP receives and can be notified; it sends unless it is a gateway, because
 * outgoing transfers from a gateway are not allowed.
 */
function flags(row: VaspRow): VaspFlags {
  return {
    hasAdmin: row.has_admin,
    isActiveReceiver: row.has_admin,
    isActiveSender: row.has_admin && !row.is_gateway,
    isNotifiable: row.has_admin,
  };
}

const VASP_SELECT = `
  select v.did, v.name, v.parent_did, v.created_at,
    exists (select 1 from user_roles r where r.vasp_did = v.did or r.vasp_did = v.parent_did) as has_admin,
    exists (select 1 from vasps c where c.parent_did = v.did) as is_gateway
  from vasps v`;

type Db = Pool | PoolClient;

async function vaspRow(db: Db, did: string): Promise<VaspRow | undefined> {
  const { rows } = await db.query<VaspRow>(`${VASP_SELECT} where v.did = $1`, [did]);
  return rows[0];
}

interface ValueRow {
  vasp_did: string;
  field_name: string;
  value: unknown;
  issuer: string;
  issued_at: Date;
}

/** All field values of the given VASPs, newest first per field. */
async function valuesOf(db: Db, dids: string[]): Promise<Map<string, Map<string, ValueRow[]>>> {
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

/** The directory renders one string per field: strings as they are, anything else as JSON. */
const asString = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** `GET /tf/simple/vasps/:did` fields that are always present. */
export const SIMPLE_DEFAULT_FIELDS = [
  'did', 'name', 'website', 'logo', 'incorporationCountry', 'documents', 'hasAdmin', 'isNotifiable', 'isActiveSender',
  'isActiveReceiver', 'issuers',
] as const;

export type SimpleVasp = Record<string, unknown> & { did: string; name: string };

/**
 * The simple view (tf_VASPInfoSimple): the default fields plus one string property per requested field. The spec types
 * every default field as a string (or a boolean, for the flags) and interface.md answers "one string property per
 * requested field", so a field the VASP has not set is left out, never null. `issuers` is a string too: JSON mapping each
 * set field, in snake_case, to who issued its current value and when, as the network's issuer attestations do.
 */
function simpleView(row: VaspRow, fields: Map<string, ValueRow[]> | undefined, requested: readonly string[]): SimpleVasp {
  const latest = (name: string) => fields?.get(name)?.[0];
  const str = (name: string) => {
    const v = latest(name);
    return v === undefined ? undefined : asString(v.value);
  };
  const issuers: Record<string, { issuerDid: string; issuedDate: string }> = {};
  for (const [name, values] of fields ?? []) issuers[snake(name)] = { issuerDid: values[0]!.issuer, issuedDate: values[0]!.issued_at.toISOString() };
  const view: SimpleVasp = { did: row.did, name: str('name') ?? row.name };
  for (const name of ['website', 'logo', 'incorporationCountry', 'documents']) {
    const v = str(name);
    if (v !== undefined) view[name] = v;
  }
  Object.assign(view, flags(row), { issuers: JSON.stringify(issuers) });
  for (const name of requested) {
    const v = str(name);
    if (!(name in view) && v !== undefined) view[name] = v;
  }
  return view;
}

export async function simpleVasp(db: Db, did: string, requested: readonly string[]): Promise<SimpleVasp | undefined> {
  const row = await vaspRow(db, did);
  if (!row) return undefined;
  return simpleView(row, (await valuesOf(db, [did])).get(did), requested);
}

export type ListingType = 'exclude_subsidiaries' | 'exclude_gateways' | 'all';

export interface ListQuery {
  page: number;
  perPage: number;
  /** Validated `field:ASC|DESC` terms; see ORDERABLE. */
  order: { column: string; direction: 'ASC' | 'DESC'; nulls?: 'FIRST' | 'LAST' }[];
  q?: string;
  listingType: ListingType;
  fields: readonly string[];
}

/** Fields the listing can be ordered by, and their columns. */
export const ORDERABLE: Record<string, string> = { name: 'v.name', did: 'v.did', createdAt: 'v.created_at' };

export async function listSimpleVasps(db: Db, query: ListQuery): Promise<{ vaspRows: SimpleVasp[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.q) {
    params.push(`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`(v.name ilike $${params.length} or v.did ilike $${params.length}
      or exists (select 1 from vasp_field_values f where f.vasp_did = v.did and f.field_name = 'name'
                 and f.value #>> '{}' ilike $${params.length}))`);
  }
  // Nested VASPs: originators see only the parent, so the default listing leaves subsidiaries out.
  if (query.listingType === 'exclude_subsidiaries') where.push('v.parent_did is null');
  if (query.listingType === 'exclude_gateways') where.push('not exists (select 1 from vasps c where c.parent_did = v.did)');
  const filter = where.length ? `where ${where.join(' and ')}` : '';
  const orderBy = [...query.order.map((o) => `${ORDERABLE[o.column]} ${o.direction}${o.nulls ? ` nulls ${o.nulls}` : ''}`), 'v.did asc'].join(', ');
  const total = await db.query<{ n: number }>(`select count(*)::int as n from vasps v ${filter}`, params);
  params.push(query.perPage, query.page * query.perPage);
  const { rows } = await db.query<VaspRow>(
    `${VASP_SELECT} ${filter} order by ${orderBy} limit $${params.length - 1} offset $${params.length}`,
    params,
  );
  const values = await valuesOf(db, rows.map((r) => r.did));
  return { vaspRows: rows.map((r) => simpleView(r, values.get(r.did), query.fields)), total: total.rows[0]!.n };
}

/** The full profile (tf_VASPInfo), as `POST /tf/vasps/update` answers. */
export async function vaspInfo(db: Db, did: string) {
  const row = await vaspRow(db, did);
  if (!row) return undefined;
  const fields = (await valuesOf(db, [did])).get(did) ?? new Map<string, ValueRow[]>();
  const out: ProfileField[] = [];
  const toValue = (v: ValueRow): FieldValue => ({ value: v.value, issuer: v.issuer, issuanceDate: v.issued_at.toISOString(), expirationDate: null });
  if (!fields.has('name')) {
    // The seed's name, given by the network's operator: the issuer is a DID like every other.
    out.push({ fieldName: 'name', values: [{ value: row.name, issuer: OPERATOR_DID, issuanceDate: row.created_at.toISOString(), expirationDate: null }] });
  }
  for (const [fieldName, values] of fields) out.push({ fieldName, values: values.map(toValue) });
  const { hasAdmin, isActiveSender, isActiveReceiver } = flags(row);
  return { did, fields: out, documents: [] as unknown[], hasAdmin, isActiveSender, isActiveReceiver };
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
      await client.query('insert into vasp_field_values (vasp_did, field_name, value, issuer) values ($1, $2, $3, $4)', [
        did, field.fieldName, JSON.stringify(value), issuer,
      ]);
    }
  }
}

export interface VaspSettings {
  autoconfirm: boolean;
  autoredirect: boolean;
  vaspDiscoverability: boolean;
  statusToProcessBlockchain: 'CREATED' | 'SENT' | 'ACK' | 'ACCEPTED' | null;
}

export const DEFAULT_SETTINGS: VaspSettings = {
  autoconfirm: true,
  autoredirect: true,
  vaspDiscoverability: true,
  statusToProcessBlockchain: null,
};

interface SettingsRow {
  autoconfirm: boolean;
  autoredirect: boolean;
  vasp_discoverability: boolean;
  status_to_process_blockchain: VaspSettings['statusToProcessBlockchain'];
}

/** A VASP's settings, with the defaults for what it never set. Later parts (routing) read them through this. */
export async function getVaspSettings(db: Db, did: string): Promise<VaspSettings> {
  const { rows } = await db.query<SettingsRow>('select * from vasp_settings where vasp_did = $1', [did]);
  const row = rows[0];
  if (!row) return { ...DEFAULT_SETTINGS };
  return {
    autoconfirm: row.autoconfirm,
    autoredirect: row.autoredirect,
    vaspDiscoverability: row.vasp_discoverability,
    statusToProcessBlockchain: row.status_to_process_blockchain,
  };
}

/** Applies the settings that were sent; the others keep their value (or default). One statement, so concurrent updates of
 * different settings do not overwrite each other. */
export async function updateVaspSettings(db: Db, did: string, patch: Partial<VaspSettings>): Promise<VaspSettings> {
  const setsStatus = patch.statusToProcessBlockchain !== undefined;
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
    [did, patch.autoconfirm ?? null, patch.autoredirect ?? null, patch.vaspDiscoverability ?? null, patch.statusToProcessBlockchain ?? null, setsStatus],
  );
  const row = rows[0]!;
  return {
    autoconfirm: row.autoconfirm,
    autoredirect: row.autoredirect,
    vaspDiscoverability: row.vasp_discoverability,
    statusToProcessBlockchain: row.status_to_process_blockchain,
  };
}
