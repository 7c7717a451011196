// The review queue: transfers waiting for a person, oldest first, refreshed without a reload.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type ConsoleConfig, type Page, type Session, type TransferRow } from './api';
import { ago, Amount, VaspName, errorText, hitsText, html, Message, QUEUE_REFRESH_MS, when } from './ui';

export function Queue({ session, config }: { session: Session; config?: ConsoleConfig }) {
  const [rows, setRows] = useState<TransferRow[] | null>(null);
  const [error, setError] = useState('');
  const [refreshedAt, setRefreshedAt] = useState<Date | null>(null);
  const load = useCallback(async () => {
    try {
      const page = await api<Page<TransferRow>>(session, 'GET', '/v1/transfers?needs=either&order=asc&limit=200');
      setRows(page.data);
      setError('');
      setRefreshedAt(new Date());
    } catch (e) {
      setError(errorText(e));
    }
  }, [session]);
  useEffect(() => {
    void load();
    const timer = setInterval(load, QUEUE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);
  return html`<section aria-labelledby="queue-title">
    <h2 id="queue-title">Review queue</h2>
    <p class="muted" aria-live="polite">
      Transfers waiting for a person, oldest first. Refreshed every ${QUEUE_REFRESH_MS / 1000}
      s${refreshedAt ? `, last at ${refreshedAt.toLocaleTimeString()}` : ''}.
    </p>
    <${Message}>${error}<//>
    ${
      rows === null
        ? html`<p>Loading…</p>`
        : rows.length === 0
          ? html`<p id="queue-empty">Nothing waits for review or routing.</p>`
          : html` <table id="queue">
              <thead>
                <tr>
                  <th>Received</th>
                  <th>Waiting for</th>
                  <th>Screening hits</th>
                  <th>Deadline</th>
                  <th>Counterparty</th>
                  <th>Subsidiary</th>
                  <th>Amount</th>
                  <th>Transaction</th>
                </tr>
              </thead>
              <tbody>
                ${rows.map(
                  (r) =>
                    html`<tr class="clickable" data-id=${r.id}>
                      <td>${when(r.createdAt)}</td>
                      <td>
                        ${r.needsReview ? html`<span class="badge warn">screening review</span>` : html`<span class="badge warn">routing</span>`}
                      </td>
                      <td class="hits">${r.needsReview ? hitsText(r.hits) : '—'}</td>
                      <td>
                        ${when(r.deadlineAt)}
                        <span class="muted">${ago(r.deadlineAt)}</span>
                        ${r.escalated ? html`<span class="badge bad">escalated</span>` : ''}
                      </td>
                      <td class="counterparty"><${VaspName} did=${r.counterpartyDid} session=${session} /></td>
                      <td><${VaspName} did=${r.subsidiaryDid} session=${session} /></td>
                      <td><${Amount} amount=${r.amount} asset=${r.asset} config=${config} /></td>
                      <td><a href=${`#/transfer/${encodeURIComponent(r.workflowId)}`}>${r.id}</a></td>
                    </tr>`,
                )}
              </tbody>
            </table>`
    }
  </section>`;
}
