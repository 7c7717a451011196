// Wallet ownership proofs (GET /v1/wallet-proofs): the pending ones first, by default, oldest first as they wait; any
// status, a customer or an address on request, more rows by cursor. A pending screenshot or declaration is reviewed in its row.
import { useEffect, useState } from 'preact/hooks';
import type { Session, WalletProofView } from './api';
import { usePagedList } from './paged-list';
import { methodText, proofLink, ReviewActions, Shortened, timeLeft } from './proof';
import { html, Message, StatusBadge, valueOf, when } from './ui';

const STATUSES = ['PENDING', 'VERIFIED', 'REJECTED', 'EXPIRED'];

export function WalletProofs({ session }: { session: Session }) {
  const [status, setStatus] = useState('PENDING');
  const [find, setFind] = useState({ customerRef: '', address: '' });
  const { rows, setRows, next, error, load } = usePagedList<WalletProofView>(session, '/v1/wallet-proofs');
  const [notice, setNotice] = useState('');
  const search = (cursor?: string) => {
    // Pending proofs wait on a deadline: the oldest first. Finished ones read as a history: the newest first.
    const params = new URLSearchParams({ limit: '50', order: status === 'PENDING' ? 'asc' : 'desc' });
    if (status) params.set('status', status);
    for (const [k, v] of Object.entries(find)) if (v.trim()) params.set(k, v.trim());
    return load(params, cursor);
  };
  useEffect(() => {
    void search();
  }, [status]);
  const reviewed = (updated: WalletProofView | null, text: string) => {
    setNotice(text);
    if (!updated) return void search();
    setRows((all) => (all ?? []).map((r) => (r.id === updated.id ? updated : r)));
  };
  return html`<section aria-labelledby="proofs-title">
    <h2 id="proofs-title">Wallet proofs</h2>
    <p class="muted">Ownership proofs of customers’ self-hosted wallets.</p>
    <form
      class="filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        void search();
      }}
    >
      <label
        >Status<select name="status" value=${status} onChange=${(e: Event) => setStatus(valueOf(e))}>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
          <option value="">any</option>
        </select></label
      >
      <label
        >Customer reference<input
          name="customerRef"
          value=${find.customerRef}
          onInput=${(e: Event) => setFind({ ...find, customerRef: valueOf(e) })}
      /></label>
      <label
        >Address<input
          name="address"
          value=${find.address}
          onInput=${(e: Event) => setFind({ ...find, address: valueOf(e) })}
      /></label>
      <button class="primary" type="submit">Search</button>
    </form>
    <${Message} kind="success">${notice}<//>
    <${Message}>${error}<//>
    ${
      rows &&
      html`<table id="wallet-proofs">
          <thead>
            <tr>
              <th>Method</th>
              <th>Asset</th>
              <th>Address</th>
              <th>Customer reference</th>
              <th>Status</th>
              <th>Reason</th>
              <th>Deadline</th>
              <th>Created</th>
              <th>Verified / reused until</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (p) =>
                html`<tr data-id=${p.id}>
                  <td class="method">
                    <a href=${proofLink(p.id)}>${methodText(p.method)}</a
                    >${p.scheme ? html` <span class="muted">${p.scheme}</span>` : ''}
                  </td>
                  <td>${p.asset}</td>
                  <td class="address"><${Shortened} value=${p.address} /></td>
                  <td><code>${p.customerRef}</code></td>
                  <td class="status"><${StatusBadge} status=${p.status} /></td>
                  <td class="reason">${p.reason ?? '—'}</td>
                  <td>
                    ${when(p.challengeExpiresAt)}
                    ${p.status === 'PENDING' ? html`<span class="muted time-left">${timeLeft(p.challengeExpiresAt)}</span>` : ''}
                  </td>
                  <td>${when(p.createdAt)}</td>
                  <td>
                    ${p.verifiedAt ? html`${when(p.verifiedAt)} <span class="muted">until ${when(p.expiresAt)}</span>` : '—'}
                  </td>
                  <td><${ReviewActions} session=${session} proof=${p} onDone=${reviewed} /></td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${rows.length === 0 ? html`<p id="wallet-proofs-empty">No proof ${status ? `is ${status}` : 'yet'}.</p>` : ''}
        ${next ? html`<button type="button" id="wallet-proofs-more" onClick=${() => search(next)}>More</button>` : ''}`
    }
  </section>`;
}
