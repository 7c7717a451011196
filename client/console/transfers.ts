// Every transfer, by any filter of GET /v1/transfers, more rows by cursor.
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleConfig, Session, TransferRow } from './api';
import { usePagedList } from './paged-list';
import { Amount, VaspName, html, Message, StatusBadge, valueOf, when } from './ui';

const FILTERS = [
  'direction',
  'status',
  'needs',
  'subsidiary',
  'counterparty',
  'asset',
  'createdFrom',
  'createdTo',
  'q',
];

export function Transfers({ session, config }: { session: Session; config?: ConsoleConfig }) {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, next, error, load } = usePagedList<TransferRow>(session, '/v1/transfers');
  const search = (cursor?: string) => {
    const params = new URLSearchParams();
    for (const k of FILTERS) if (filters[k]) params.set(k, filters[k]!);
    return load(params, cursor);
  };
  useEffect(() => {
    void search();
  }, []);
  const input = (name: string, label: string, props = {}) =>
    html`<label
      >${label}<input
        name=${name}
        value=${filters[name] || ''}
        onInput=${(e: Event) => setFilters({ ...filters, [name]: valueOf(e) })}
        ...${props}
    /></label>`;
  const select = (name: string, label: string, options: string[]) =>
    html`<label
      >${label}<select
        name=${name}
        value=${filters[name] || ''}
        onChange=${(e: Event) => setFilters({ ...filters, [name]: valueOf(e) })}
      >
        <option value="">any</option>
        ${options.map((o) => html`<option value=${o}>${o}</option>`)}
      </select></label
    >`;
  return html`<section aria-labelledby="transfers-title">
    <h2 id="transfers-title">Transfers</h2>
    <form
      class="filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        void search();
      }}
    >
      ${select('direction', 'Direction', ['incoming', 'outgoing'])}
      ${input('status', 'Status', { placeholder: 'ACCEPTED,DECLINED' })}
      ${select('needs', 'Waiting for', ['review', 'routing', 'either'])} ${input('subsidiary', 'Subsidiary DID')}
      ${input('counterparty', 'Counterparty DID')} ${input('asset', 'Asset')}
      ${input('createdFrom', 'From', { type: 'date' })} ${input('createdTo', 'To', { type: 'date' })}
      ${input('q', 'Transaction id or reference')}
      <button class="primary" type="submit">Search</button>
    </form>
    <${Message}>${error}<//>
    ${
      rows &&
      html`<table id="transfers">
          <thead>
            <tr>
              <th>Created</th>
              <th>Direction</th>
              <th>Status</th>
              <th>Subsidiary</th>
              <th>Counterparty</th>
              <th>Amount</th>
              <th>Transfer</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (r) =>
                html`<tr class="clickable" data-workflow=${r.workflowId}>
                  <td>${when(r.createdAt)}</td>
                  <td>${r.direction}</td>
                  <td>
                    <${StatusBadge} status=${r.status} />
                    ${r.needsReview || r.needsRouting ? html`<span class="badge warn">waiting</span>` : ''}
                  </td>
                  <td><${VaspName} did=${r.subsidiaryDid} session=${session} /></td>
                  <td class="counterparty"><${VaspName} did=${r.counterpartyDid} session=${session} /></td>
                  <td><${Amount} amount=${r.amount} asset=${r.asset} config=${config} /></td>
                  <td><a href=${`#/transfer/${encodeURIComponent(r.workflowId)}`}>${r.id}</a></td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${rows.length === 0 ? html`<p>No transfer matches.</p>` : ''}
        ${next ? html`<button type="button" onClick=${() => search(next)}>More</button>` : ''}`
    }
  </section>`;
}
