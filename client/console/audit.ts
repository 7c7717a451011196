// The audit log: filters, more rows by cursor, and the CSV export.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type ErrorBody, type Session } from './api';
import { usePagedList } from './paged-list';
import { errorText, Fields, html, Message, valueOf, VaspName, when, who } from './ui';

interface AuditRow {
  at: string;
  actor: string;
  actorName?: string;
  action: string;
  subject: string;
  details: unknown;
  chain: string;
  seq: number;
  hash: string;
  prevHash: string;
}

const AUDIT_FILTERS = ['actor', 'action', 'subject', 'from', 'to'];

export function AuditLog({ session }: { session: Session }) {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, next, error, setError, load } = usePagedList<AuditRow>(session, '/v1/audit-log');
  const query = () => {
    const params = new URLSearchParams();
    for (const k of AUDIT_FILTERS) if (filters[k]) params.set(k, filters[k]!);
    return params;
  };
  const search = (cursor?: string) => load(query(), cursor);
  // A download through fetch, so the request carries the Authorization header like every other call.
  const exportCsv = async () => {
    const headers: Record<string, string> = session?.token ? { authorization: `Bearer ${session.token}` } : {};
    const r = await fetch(`/v1/audit-log/export?${query()}`, { headers });
    if (!r.ok) return setError(errorText(new ApiError(r.status, (await r.json().catch(() => ({}))) as ErrorBody)));
    const link = document.createElement('a');
    link.href = URL.createObjectURL(await r.blob());
    link.download = 'audit-log.csv';
    link.click();
    URL.revokeObjectURL(link.href);
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
  return html`<section aria-labelledby="audit-title">
    <h2 id="audit-title">Audit log</h2>
    <form
      class="filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        void search();
      }}
    >
      ${input('actor', 'Actor')}${input('action', 'Action (or prefix ending in .)', { placeholder: 'incoming.' })}${input('subject', 'Subject')}
      ${input('from', 'From', { type: 'date' })}${input('to', 'To', { type: 'date' })}
      <button class="primary" type="submit">Search</button>
      <button type="button" onClick=${exportCsv}>Export CSV</button>
    </form>
    <${Message}>${error}<//>
    ${
      rows &&
      html`<table id="audit">
          <thead>
            <tr>
              <th>At</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Subject</th>
              <th>Details</th>
              <th>Chain</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (r) =>
                html`<tr>
                  <td>${when(r.at)}</td>
                  <td>${who(r.actor, r.actorName)}</td>
                  <td>${r.action}</td>
                  <td class="mono" title=${r.subject}>
                    ${r.subject.startsWith('did:') ? html`<${VaspName} did=${r.subject} session=${session} />` : r.subject}
                  </td>
                  <td class="details"><${Fields} value=${r.details} /></td>
                  <td class="mono" title=${`hash ${r.hash}\nprevious ${r.prevHash}`}>
                    ${r.chain} #${r.seq} ${r.hash.slice(0, 12)}…
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${rows.length === 0 ? html`<p>No entry matches.</p>` : ''}
        ${next ? html`<button type="button" onClick=${() => search(next)}>More</button>` : ''}`
    }
  </section>`;
}
