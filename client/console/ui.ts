// The small pieces every page uses: the template tag, messages, badges and how dates, DIDs and hits read.
import { h, type ComponentChildren } from 'preact';
import htm from 'htm';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type ConsoleConfig, type ScreeningHits, type Session } from './api';

export const html = htm.bind(h);
export const QUEUE_REFRESH_MS = 3000;

/** The value of the input, select or textarea an event came from. */
export const valueOf = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export const short = (did: string | null | undefined) =>
  did ? (did.length > 26 ? `${did.slice(0, 16)}…${did.slice(-6)}` : did) : '—';
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
// Who acted: the name to read, and the stable id that the audit log records (a name can be changed at the identity provider).
export const who = (actor: string | undefined, name: string | undefined) =>
  name && name !== actor ? `${name} (${actor})` : actor;
export const ago = (iso: string | null | undefined) => {
  if (!iso) return '';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (Math.abs(s) < 90) return s >= 0 ? `${s} s ago` : `in ${-s} s`;
  const m = Math.round(s / 60);
  if (Math.abs(m) < 90) return m >= 0 ? `${m} min ago` : `in ${-m} min`;
  const hr = Math.round(m / 60);
  return hr >= 0 ? `${hr} h ago` : `in ${-hr} h`;
};

export function Message({ kind = 'error', children }: { kind?: string; children?: ComponentChildren }) {
  if (!children) return null;
  return html`<div class="message ${kind}" role=${kind === 'error' ? 'alert' : 'status'}>${children}</div>`;
}

export function StatusBadge({ status }: { status: string }) {
  const kind = ['ACCEPTED', 'VERIFIED', 'RELEASED', 'RETURNED'].includes(status)
    ? 'ok'
    : ['DECLINED', 'REJECTED', 'FAILED', 'CANCELLED', 'EXPIRED', 'RETURN_REQUIRED'].includes(status)
      ? 'bad'
      : '';
  return html`<span class="badge ${kind}" data-status=${status}>${status}</span>`;
}

export function hitsText(hits: ScreeningHits | null | undefined) {
  // The API leaves the field out for roles that may not read screening hits (compliance and admin may).
  if (hits === undefined) return 'shown to the compliance role only';
  if (!hits) return '—';
  const names = (hits.nameHits || []).map(
    (x) => `${x.matchedName} (${x.list} #${x.entNum}, ${Math.round(x.score * 100)} %)`,
  );
  const addresses = (hits.addressHits || []).map((x) => `address on ${x.list}`);
  const all = [...names, ...addresses];
  if (hits.skipped === 'undecryptable') all.push('personal data could not be decrypted');
  return all.length ? all.join('; ') : 'none';
}

export function errorText(e: unknown) {
  if (e instanceof ApiError) {
    if (e.status === 401) return 'You are not signed in, or your sign-in expired. Sign in again.';
    if (e.status === 403) return `Your role may not do this: ${e.message}`;
    return e.message;
  }
  return `The console could not reach the API: ${(e as Error).message}`;
}

/** Base units as a decimal in the asset's units: 2500000000000000000 with 18 decimals is 2.5. */
export function unitsOf(amount: string, decimals: number): string {
  if (!/^\d+$/.test(amount) || decimals === 0) return amount;
  const digits = amount.replace(/^0+(?=\d)/, '').padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return `${Number(whole).toLocaleString('en')}${fraction ? `.${fraction}` : ''}`;
}

/**
 * An amount as its reader thinks of it: in the asset's units (`2.5 ETH`), with its value in USD where a price is known;
 * base units as they are when the asset's decimals are not known.
 */
export function Amount({
  amount,
  asset,
  config,
}: {
  amount: string | number | null | undefined;
  asset: string | null | undefined;
  config: ConsoleConfig | null | undefined;
}) {
  if (amount === null || amount === undefined) return html`<span>—</span>`;
  const raw = String(amount);
  const known = asset ? config?.assets?.[asset.toUpperCase()] : undefined;
  if (!known) return html`<span class="amount" title=${`${raw} base units`}>${raw} ${asset ?? ''}</span>`;
  const units = unitsOf(raw, known.decimals);
  const usd = known.priceUSD === null ? undefined : (Number(raw) / 10 ** known.decimals) * known.priceUSD;
  const text = `${units} ${asset}`;
  const fiat = usd === undefined ? '' : `≈ ${usd.toLocaleString('en', { maximumFractionDigits: 2 })} USD`;
  return html`<span class="amount" title=${`${raw} base units`}>${text} <span class="muted fiat">${fiat}</span></span>`;
}

/** A field name as a label: `vaspDid` reads "VASP DID", `review_value` "review value". */
export function labelOf(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .split(' ')
    .map((w) => (['did', 'vasp', 'id', 'ivms101', 'pii', 'url', 'api', 'csv'].includes(w) ? w.toUpperCase() : w));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function fieldEntries(value: unknown, prefix = ''): [string, unknown][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[prefix, value]];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const label = prefix ? `${prefix} › ${labelOf(k)}` : labelOf(k);
    return v !== null && typeof v === 'object' && !Array.isArray(v) && prefix.split(' › ').length < 3
      ? fieldEntries(v, label)
      : [[label, v] as [string, unknown]];
  });
}

function fieldValue(v: unknown) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'string' && /^did:[a-z0-9]+:/.test(v)) return html`<span class="mono" title=${v}>${short(v)}</span>`;
  if (Array.isArray(v))
    return v.every((x) => x === null || typeof x !== 'object') ? v.join(', ') || '—' : JSON.stringify(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** An object's fields as labelled values (nested ones as "parent › child"), instead of its raw JSON. */
export function Fields({ value }: { value: unknown }) {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  if (typeof value !== 'object' || Array.isArray(value)) return html`<span>${fieldValue(value)}</span>`;
  const entries = fieldEntries(value);
  if (entries.length === 0) return html`<span class="muted">—</span>`;
  return html`<dl class="fields">
    ${entries.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${fieldValue(v)}</dd>`,
    )}
  </dl>`;
}

// VASPs' directory names (GET /console/vasp-names.json), asked once per page load for each DID, in batches: every
// VaspName shown in the same moment joins one request.
const vaspNames = new Map<string, string | null>();
const asked = new Set<string>();
const nameListeners = new Set<() => void>();
let batch: string[] | null = null;

function askName(session: Session, did: string): void {
  if (asked.has(did)) return;
  asked.add(did);
  if (!batch) {
    batch = [];
    setTimeout(() => {
      const dids = batch!;
      batch = null;
      for (let i = 0; i < dids.length; i += 100) {
        const chunk = dids.slice(i, i + 100);
        api<{ names: Record<string, string | null> }>(
          session,
          'GET',
          `/console/vasp-names.json?did=${encodeURIComponent(chunk.join(','))}`,
        ).then(
          (r) => {
            for (const [d, n] of Object.entries(r.names)) vaspNames.set(d, n);
            for (const l of nameListeners) l();
          },
          () => undefined,
        );
      }
    }, 0);
  }
  batch.push(did);
}

/**
 * VASPs' directory names where only text fits (a select's options): the name, else the DID shortened, re-rendering the
 * caller when names arrive.
 */
export function useVaspLabels(session: Session, dids: readonly string[]): (did: string) => string {
  const [, setSeen] = useState(0);
  const key = dids.join(',');
  useEffect(() => {
    const listener = () => setSeen((n) => n + 1);
    nameListeners.add(listener);
    for (const did of dids) askName(session, did);
    return () => {
      nameListeners.delete(listener);
    };
  }, [key]);
  return (did) => vaspNames.get(did) ?? short(did);
}

/** A VASP by its directory name, the DID on hover (and shortened in its place while no name is known). */
export function VaspName({ did, session }: { did: string | null | undefined; session: Session }) {
  const [, setSeen] = useState(0);
  useEffect(() => {
    const listener = () => setSeen((n) => n + 1);
    nameListeners.add(listener);
    if (did) askName(session, did);
    return () => {
      nameListeners.delete(listener);
    };
  }, [did]);
  if (!did) return html`<span>—</span>`;
  const name = vaspNames.get(did);
  return name
    ? html`<span class="vasp" title=${did} data-did=${did}>${name}</span>`
    : html`<span class="vasp mono" title=${did} data-did=${did}>${short(did)}</span>`;
}
