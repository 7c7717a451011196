// The small pieces every page uses: the template tag, messages, badges and how dates, DIDs and hits read.
import { h, type ComponentChildren } from 'preact';
import htm from 'htm';
import { ApiError, type ScreeningHits } from './api';

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
  const kind = ['ACCEPTED'].includes(status)
    ? 'ok'
    : ['DECLINED', 'REJECTED', 'FAILED', 'CANCELLED', 'EXPIRED'].includes(status)
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
