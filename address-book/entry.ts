/**
 * One entry of the group's address registry, as the internal API, the CSV import and the reconciliation see it, and
 * the normalisation they all apply. Pure functions: the API, the CLI (row by row, before sending) and the workflow's
 * activities share them, so a row the CLI accepts is a row the API accepts.
 *
 * The network compares addresses as strings, so the registry stores them the way the network stores them: asset symbols upper-case, EVM addresses (`0x` + 40 hex)
 * lower-case, every other address case-sensitive, no whitespace or commas (the network's DELETE takes a
 * comma-separated list). A memo/tag is kept apart from its address; the network form is `<address>:<tag>`.
 */

import { FREE_TEXT_RULE, isFreeText } from '../lib/text';

export const MAX_ASSET_LENGTH = 64;
/** The whole network address, `<address>:<tag>` included (the network's limit). */
export const MAX_ADDRESS_LENGTH = 256;
export const MAX_TAG_LENGTH = 64;
export const MAX_CUSTOMER_REF_LENGTH = 256;

const SYMBOL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const EVM = /^0x[0-9a-fA-F]{40}$/;
const FORBIDDEN = /[\s,\u0000-\u001f\u007f]/;
const DID = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

export interface RegistryEntry {
  asset: string;
  /** The address without its tag. */
  address: string;
  /** The memo/destination tag, '' when there is none. */
  tag: string;
  customerRef: string;
  vaspDID: string;
}

/** What a caller sends: the tag either in its own field or appended as `<address>:<tag>`. */
export interface EntryInput {
  asset?: unknown;
  address?: unknown;
  tag?: unknown;
  customerRef?: unknown;
  vaspDID?: unknown;
}

export interface EntryProblem {
  field: 'asset' | 'address' | 'tag' | 'customerRef' | 'vaspDID';
  rule: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: EntryProblem };

const bad = <T>(field: EntryProblem['field'], rule: string): Checked<T> => ({ ok: false, problem: { field, rule } });

/** The network form of an address: `<address>:<tag>`, or the address alone. */
export const networkAddress = (e: { address: string; tag: string }) => (e.tag ? `${e.address}:${e.tag}` : e.address);

/** The registry's identity of an entry: one VASP may register an (asset, address, tag) once. */
export const entryKey = (e: { asset: string; address: string; tag: string }) =>
  `${e.asset}\u0000${e.address}\u0000${e.tag}`;

export function normalizeAsset(raw: unknown): Checked<string> {
  if (typeof raw !== 'string') return bad('asset', 'is required');
  const s = raw.trim();
  if (!s) return bad('asset', 'is empty');
  if (!SYMBOL.test(s))
    return bad(
      'asset',
      `must be an asset code such as ETH (letters, digits, ".", "_", "-"; up to ${MAX_ASSET_LENGTH})`,
    );
  return { ok: true, value: s.toUpperCase() };
}

function normalizeTag(raw: string): Checked<string> {
  if (!raw) return bad('tag', 'is empty: use <address>:<tag> with a non-empty tag, or leave the tag out');
  if (raw.length > MAX_TAG_LENGTH) return bad('tag', `is longer than ${MAX_TAG_LENGTH} characters`);
  if (FORBIDDEN.test(raw) || raw.includes(':'))
    return bad('tag', 'must not contain whitespace, commas, colons or control characters');
  return { ok: true, value: raw };
}

/** Address and tag, from `address` (maybe `<address>:<tag>`) and an optional separate `tag`. */
export function normalizeAddressAndTag(
  rawAddress: unknown,
  rawTag: unknown,
): Checked<{ address: string; tag: string }> {
  if (typeof rawAddress !== 'string') return bad('address', 'is required');
  let address = rawAddress.trim();
  if (!address) return bad('address', 'is empty');
  if (FORBIDDEN.test(address) || !isFreeText(address))
    return bad('address', 'must not contain whitespace, commas or control characters');
  let tag = '';
  if (rawTag !== undefined && rawTag !== null && rawTag !== '') {
    if (typeof rawTag !== 'string' && typeof rawTag !== 'number') return bad('tag', 'must be a string');
    if (address.includes(':'))
      return bad('address', 'carries a tag (<address>:<tag>) while tag is also given: give it once');
    const t = normalizeTag(String(rawTag).trim());
    if (!t.ok) return t;
    tag = t.value;
  } else {
    const cut = address.lastIndexOf(':');
    if (cut !== -1) {
      const base = address.slice(0, cut);
      if (!base || base.split(':').some((p) => !p))
        return bad('address', 'malformed tag form: expected <address>:<tag>');
      const t = normalizeTag(address.slice(cut + 1));
      if (!t.ok) return t;
      address = base;
      tag = t.value;
    }
  }
  if (EVM.test(address)) address = address.toLowerCase();
  if (networkAddress({ address, tag }).length > MAX_ADDRESS_LENGTH) {
    return bad('address', `is longer than ${MAX_ADDRESS_LENGTH} characters (with its tag)`);
  }
  return { ok: true, value: { address, tag } };
}

export function normalizeCustomerRef(raw: unknown): Checked<string> {
  if (typeof raw !== 'string') return bad('customerRef', 'is required');
  const s = raw.trim();
  if (!s) return bad('customerRef', 'is empty');
  if (s.length > MAX_CUSTOMER_REF_LENGTH)
    return bad('customerRef', `is longer than ${MAX_CUSTOMER_REF_LENGTH} characters`);
  if (!isFreeText(s)) return bad('customerRef', FREE_TEXT_RULE);
  return { ok: true, value: s };
}

/**
 * Checks one entry against the rules and the group: the VASP must be one of `subsidiaries` (the gateway only
 * receives, and a VASP outside the group is not ours to register for). Returns the normalised entry or the first
 * problem, naming its field.
 */
export function checkEntry(input: EntryInput, subsidiaries: ReadonlySet<string>): Checked<RegistryEntry> {
  const asset = normalizeAsset(input.asset);
  if (!asset.ok) return asset;
  const at = normalizeAddressAndTag(input.address, input.tag);
  if (!at.ok) return at;
  const ref = normalizeCustomerRef(input.customerRef);
  if (!ref.ok) return ref;
  if (typeof input.vaspDID !== 'string' || !input.vaspDID.trim()) return bad('vaspDID', 'is required');
  const vaspDID = input.vaspDID.trim();
  if (!DID.test(vaspDID)) return bad('vaspDID', 'must be a DID');
  if (!subsidiaries.has(vaspDID))
    return bad('vaspDID', 'must be a subsidiary VASP of the group (SUBSIDIARY_VASP_DIDS)');
  return {
    ok: true,
    value: { asset: asset.value, address: at.value.address, tag: at.value.tag, customerRef: ref.value, vaspDID },
  };
}

/** The key of a deletion request: asset and address (with or without `:<tag>`), tag optional. */
export function checkKey(input: EntryInput): Checked<{ asset: string; address: string; tag: string }> {
  const asset = normalizeAsset(input.asset);
  if (!asset.ok) return asset;
  const at = normalizeAddressAndTag(input.address, input.tag);
  if (!at.ok) return at;
  return { ok: true, value: { asset: asset.value, ...at.value } };
}
