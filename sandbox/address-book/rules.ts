/**
 * What an address-book entry may look like, shared by the CSV upload and the single registration, and the one
 * normalisation both apply, so that a lookup finds an address whichever way it was registered.
 *
 * - Assets: a symbol (`ETH`, `usdc.e`) is case-insensitive and stored upper-case; a CAIP-19 id (`{caip19}` in JSON,
 *   or the bare string) is stored verbatim; `{coingeckoId, network}` is stored as `coingecko:<id>@<network>`.
 *   In JSON bodies the asset may be left out: it is stored as '' and then matches every asset.
 * - Addresses: trimmed; an EVM address (`0x` + 40 hex) is lower-cased (its checksum casing carries no identity), all
 *   others are case-sensitive. Memo/tag assets use `<address>:<tag>`; the master
 *   `<address>` is a separate entry. No whitespace or commas (the delete endpoint takes a comma-separated list).
 */

export const MAX_ADDRESS_LENGTH = 256;
export const MAX_TAG_LENGTH = 64;
export const MAX_CUSTOMER_REF_LENGTH = 256;
export const CSV_HEADER = 'asset,address,customerRef';

export type Checked = { ok: true; value: string } | { ok: false; rule: string };

const SYMBOL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// CAIP-19 asset identifiers, as the network's v1 OpenAPI (`CAIP19`) writes them.
const CAIP19 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}\/[-a-z0-9]{3,8}:[-.%a-zA-Z0-9]{1,128}$/;
const EVM = /^0x[0-9a-fA-F]{40}$/;

export function normalizeAssetSymbol(raw: string): Checked {
  const s = raw.trim();
  if (!s) return { ok: false, rule: 'is empty' };
  if (SYMBOL.test(s)) return { ok: true, value: s.toUpperCase() };
  if (CAIP19.test(s)) return { ok: true, value: s };
  return {
    ok: false,
    rule: 'must be an asset symbol such as ETH (letters, digits, ".", "_", "-"; up to 64) or a CAIP-19 id',
  };
}

/** The `asset` of a JSON body: absent, a symbol, `{caip19}` or `{coingeckoId, network}`. */
export function normalizeAssetInput(asset: unknown): Checked {
  if (asset === undefined || asset === null) return { ok: true, value: '' };
  if (typeof asset === 'string') return normalizeAssetSymbol(asset);
  if (typeof asset === 'object' && !Array.isArray(asset)) {
    const o = asset as Record<string, unknown>;
    if (typeof o.caip19 === 'string') {
      return CAIP19.test(o.caip19)
        ? { ok: true, value: o.caip19 }
        : { ok: false, rule: 'caip19 must be a CAIP-19 asset id' };
    }
    if (typeof o.coingeckoId === 'string' && typeof o.network === 'string' && o.coingeckoId && o.network) {
      return { ok: true, value: `coingecko:${o.coingeckoId}@${o.network}` };
    }
  }
  return { ok: false, rule: 'must be an asset symbol, {caip19} or {coingeckoId, network}' };
}

export function normalizeAddress(raw: string): Checked {
  const s = raw.trim();
  if (!s) return { ok: false, rule: 'is empty' };
  if (s.length > MAX_ADDRESS_LENGTH) return { ok: false, rule: `is longer than ${MAX_ADDRESS_LENGTH} characters` };
  if (/[\s,\u0000-\u001f\u007f]/.test(s))
    return { ok: false, rule: 'must not contain whitespace, commas or control characters' };
  const cut = s.lastIndexOf(':');
  if (cut === -1) return { ok: true, value: EVM.test(s) ? s.toLowerCase() : s };
  const base = s.slice(0, cut);
  const tag = s.slice(cut + 1);
  if (!base || !tag || base.split(':').some((p) => !p)) {
    return { ok: false, rule: 'malformed tag form: expected <address>:<tag> with a non-empty address and tag' };
  }
  if (tag.length > MAX_TAG_LENGTH)
    return { ok: false, rule: `malformed tag form: the tag is longer than ${MAX_TAG_LENGTH} characters` };
  return { ok: true, value: `${EVM.test(base) ? base.toLowerCase() : base}:${tag}` };
}

/** The master address of a tagged address (`r…:123` → `r…`), or undefined when there is no tag. */
export function masterOf(address: string): string | undefined {
  const cut = address.lastIndexOf(':');
  return cut > 0 ? address.slice(0, cut) : undefined;
}

export function normalizeCustomerRef(raw: string): Checked {
  const s = raw.trim();
  if (s.length > MAX_CUSTOMER_REF_LENGTH)
    return { ok: false, rule: `is longer than ${MAX_CUSTOMER_REF_LENGTH} characters` };
  return { ok: true, value: s };
}

export interface Entry {
  asset: string;
  address: string;
  customerRef: string;
}

/** Checks one CSV row (already split into fields); returns the normalised entry or the reason it is rejected. */
export function checkCsvRow(fields: string[]): { entry: Entry } | { reason: string } {
  if (fields.length !== 3) {
    return { reason: `wrong number of columns: expected 3 (${CSV_HEADER}), found ${fields.length}` };
  }
  const [rawAsset, rawAddress, rawRef] = fields as [string, string, string];
  const asset = normalizeAssetSymbol(rawAsset);
  if (!asset.ok) return { reason: asset.rule === 'is empty' ? 'empty asset' : `asset: ${asset.rule}` };
  const address = normalizeAddress(rawAddress);
  if (!address.ok) return { reason: address.rule === 'is empty' ? 'empty address' : `address: ${address.rule}` };
  const ref = normalizeCustomerRef(rawRef);
  if (!ref.ok) return { reason: `customerRef: ${ref.rule}` };
  return { entry: { asset: asset.value, address: address.value, customerRef: ref.value } };
}

/** The header check made on the file's first line before the upload is accepted. */
export function checkHeader(firstLine: string): string | undefined {
  const line = firstLine.replace(/^\uFEFF/, '').replace(/\r$/, '');
  if (line === CSV_HEADER) return undefined;
  return `file: the first line must be exactly "${CSV_HEADER}"`;
}
