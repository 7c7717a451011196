// Each VASP's active key and last rotation, and rotating a key after a confirmation with a reason.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, canOperate, type ConsoleConfig, type Page, type Session } from './api';
import { errorText, html, Message, short, valueOf, VaspName, when } from './ui';

interface Key {
  did: string;
  state: string;
  activatedAt?: string | null;
}

interface Rotation {
  status: string;
  startedAt: string;
  requestedBy: string;
}

type KeyState = { active?: Key; last?: Rotation; error?: string };

export function Keys({ session, config }: { session: Session; config: ConsoleConfig }) {
  const vasps = [...(config.gatewayDid ? [config.gatewayDid] : []), ...config.subsidiaryDids];
  const [state, setState] = useState<Record<string, KeyState>>({});
  const [confirming, setConfirming] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<{ kind?: string; text?: string }>({});
  const load = useCallback(async () => {
    const next: Record<string, KeyState> = {};
    for (const did of vasps) {
      try {
        const keys = (await api<{ keys: Key[] }>(session, 'GET', `/v1/vasps/${encodeURIComponent(did)}/keys`)).keys;
        const rotations = (
          await api<Page<Rotation>>(session, 'GET', `/v1/key-rotations?vaspDID=${encodeURIComponent(did)}&limit=1`)
        ).data;
        next[did] = { active: keys.find((k) => k.state === 'active'), last: rotations[0] };
      } catch (e) {
        next[did] = { error: errorText(e) };
      }
    }
    setState(next);
  }, [session]);
  useEffect(() => {
    void load();
  }, [load]);
  const rotate = async (e: Event) => {
    e.preventDefault();
    if (reason.trim().length < 3) return setMessage({ kind: 'error', text: 'Give a reason of 3 characters or more.' });
    try {
      const r = await api<{ status: string }>(
        session,
        'POST',
        `/v1/vasps/${encodeURIComponent(confirming!)}/keys/rotate`,
        { reason: reason.trim() },
      );
      setMessage({ kind: 'success', text: `Rotation started: ${r.status}` });
      setConfirming(null);
      setReason('');
      setTimeout(load, 2000);
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  };
  return html`<section aria-labelledby="keys-title">
    <h2 id="keys-title">Keys</h2>
    <${Message} kind=${message.kind}>${message.text}<//>
    <table>
      <thead>
        <tr>
          <th>VASP</th>
          <th>Active key</th>
          <th>Last rotation</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${vasps.map((did) => {
          const s = state[did] || {};
          return html`<tr>
            <td><${VaspName} did=${did} session=${session} />${did === config.gatewayDid ? ' (gateway)' : ''}</td>
            <td class="mono">
              ${s.error ? s.error : s.active ? html`${short(s.active.did)} <span class="muted">since ${when(s.active.activatedAt)}</span>` : 'none'}
            </td>
            <td>
              ${s.last ? html`${s.last.status} ${when(s.last.startedAt)} <span class="muted">by ${s.last.requestedBy}</span>` : '—'}
            </td>
            <td>
              ${canOperate(session) ? html`<button type="button" onClick=${() => setConfirming(did)}>Rotate…</button>` : ''}
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
    ${
      confirming
        ? html`<form class="panel" onSubmit=${rotate} role="dialog" aria-labelledby="confirm-title">
            <h3 id="confirm-title">Rotate the key of <code>${confirming}</code>?</h3>
            <p>
              A new key is published as its <code>pii_didkey</code>; the current key is retired and kept for decrypting
              older data.
            </p>
            <label>Reason<input value=${reason} onInput=${(e: Event) => setReason(valueOf(e))} autofocus /></label>
            <div class="row" style="margin-top:.6rem">
              <button class="danger" type="submit">Yes, rotate</button
              ><button type="button" onClick=${() => setConfirming(null)}>Cancel</button>
            </div>
          </form>`
        : ''
    }
  </section>`;
}
