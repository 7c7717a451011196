/**
 * The network directory's data: VASP profiles (fields with a history of values), their derived flags, the "simple"
 * view the public directory answers with, and VASP settings. Shapes follow the network's v1 OpenAPI (tf_VASPInfo,
 * tf_VASPInfoSimple, tf_VASPListSimple, Settings).
 */
import { OPERATOR_DID } from '../operator';
import {
  listVaspRows,
  readSettings,
  upsertSettings,
  valuesOf,
  vaspRow,
  type Db,
  type ValueRow,
  type VaspListing,
  type VaspRow,
} from './store';

export { addFieldValues, ORDERABLE, type ListingType } from './store';

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

/** The directory renders one string per field: strings as they are, anything else as JSON. */
const asString = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** `GET /tf/simple/vasps/:did` fields that are always present. */
export const SIMPLE_DEFAULT_FIELDS = [
  'did',
  'name',
  'website',
  'logo',
  'incorporationCountry',
  'documents',
  'hasAdmin',
  'isNotifiable',
  'isActiveSender',
  'isActiveReceiver',
  'issuers',
] as const;

export type SimpleVasp = Record<string, unknown> & { did: string; name: string };

/**
 * The simple view (tf_VASPInfoSimple): the default fields plus one string property per requested field. The spec types
 * every default field as a string (or a boolean, for the flags) and interface.md answers "one string property per
 * requested field", so a field the VASP has not set is left out, never null. `issuers` is a string too: JSON mapping each
 * set field, in snake_case, to who issued its current value and when, as the network's issuer attestations do.
 */
function simpleView(
  row: VaspRow,
  fields: Map<string, ValueRow[]> | undefined,
  requested: readonly string[],
): SimpleVasp {
  const latest = (name: string) => fields?.get(name)?.[0];
  const str = (name: string) => {
    const v = latest(name);
    return v === undefined ? undefined : asString(v.value);
  };
  const issuers: Record<string, { issuerDid: string; issuedDate: string }> = {};
  for (const [name, values] of fields ?? [])
    issuers[snake(name)] = { issuerDid: values[0]!.issuer, issuedDate: values[0]!.issued_at.toISOString() };
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

export interface ListQuery extends VaspListing {
  fields: readonly string[];
}

export async function listSimpleVasps(db: Db, query: ListQuery): Promise<{ vaspRows: SimpleVasp[]; total: number }> {
  const { rows, total } = await listVaspRows(db, query);
  const values = await valuesOf(
    db,
    rows.map((r) => r.did),
  );
  return { vaspRows: rows.map((r) => simpleView(r, values.get(r.did), query.fields)), total };
}

/** The full profile (tf_VASPInfo), as `POST /tf/vasps/update` answers. */
export async function vaspInfo(db: Db, did: string) {
  const row = await vaspRow(db, did);
  if (!row) return undefined;
  const fields = (await valuesOf(db, [did])).get(did) ?? new Map<string, ValueRow[]>();
  const out: ProfileField[] = [];
  const toValue = (v: ValueRow): FieldValue => ({
    value: v.value,
    issuer: v.issuer,
    issuanceDate: v.issued_at.toISOString(),
    expirationDate: null,
  });
  if (!fields.has('name')) {
    // The seed's name, given by the network's operator: the issuer is a DID like every other.
    out.push({
      fieldName: 'name',
      values: [
        { value: row.name, issuer: OPERATOR_DID, issuanceDate: row.created_at.toISOString(), expirationDate: null },
      ],
    });
  }
  for (const [fieldName, values] of fields) out.push({ fieldName, values: values.map(toValue) });
  const { hasAdmin, isActiveSender, isActiveReceiver } = flags(row);
  return { did, fields: out, documents: [] as unknown[], hasAdmin, isActiveSender, isActiveReceiver };
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

/** A VASP's settings, with the defaults for what it never set. Later parts (routing) read them through this. */
export async function getVaspSettings(db: Db, did: string): Promise<VaspSettings> {
  const row = await readSettings(db, did);
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
  const row = await upsertSettings(db, did, {
    autoconfirm: patch.autoconfirm ?? null,
    autoredirect: patch.autoredirect ?? null,
    vaspDiscoverability: patch.vaspDiscoverability ?? null,
    status: patch.statusToProcessBlockchain ?? null,
    setsStatus,
  });
  return {
    autoconfirm: row.autoconfirm,
    autoredirect: row.autoredirect,
    vaspDiscoverability: row.vasp_discoverability,
    statusToProcessBlockchain: row.status_to_process_blockchain,
  };
}
