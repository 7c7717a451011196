// Counterparty due diligence: the reviews, filtered, with their due dates; and reviewing a counterparty for the group
// or one subsidiary (compliance role).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, canDecide, type ConsoleConfig, type Page, type Session } from './api';
import { errorText, html, Message, useVaspLabels, valueOf, VaspName, when } from './ui';

interface Review {
  vaspDid: string;
  subsidiaryDid: string | null;
  reviewValue: string;
  note: string;
  reviewedBy: string;
  reviewedAt: string;
  dueAt: string | null;
  jurisdiction: string | null;
}

const VALUES = ['TRUSTED', 'BLOCKED', 'MANUAL'];
type Filters = { reviewValue: string; dueBefore: string; jurisdiction: string; subsidiaryDid: string };
const NO_FILTERS: Filters = { reviewValue: '', dueBefore: '', jurisdiction: '', subsidiaryDid: '' };
const EMPTY_FORM = { vaspDid: '', reviewValue: 'TRUSTED', note: '', dueAt: '', subsidiaryDid: '' };

export function Counterparties({ session, config }: { session: Session; config: ConsoleConfig }) {
  const label = useVaspLabels(session, config.subsidiaryDids);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<Review[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [form, setForm] = useState(EMPTY_FORM);
  const [message, setMessage] = useState<{ kind?: string; text?: string }>({});
  const query = (cursor?: string) => {
    const q = new URLSearchParams({ limit: '50' });
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
    if (cursor) q.set('cursor', cursor);
    return q.toString();
  };
  const load = useCallback(
    async (cursor?: string) => {
      try {
        const page = await api<Page<Review>>(session, 'GET', `/v1/counterparties?${query(cursor)}`);
        setRows((prev) => (cursor ? [...prev, ...page.data] : page.data));
        setNext(page.nextCursor ?? null);
      } catch (e) {
        setMessage({ kind: 'error', text: errorText(e) });
      }
    },
    [session, filters],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const setFilter = (name: keyof Filters) => (e: Event) => setFilters({ ...filters, [name]: valueOf(e) });
  const setField = (name: keyof typeof EMPTY_FORM) => (e: Event) => setForm({ ...form, [name]: valueOf(e) });
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const saved = await api<Review>(session, 'PUT', `/v1/counterparties/${encodeURIComponent(form.vaspDid.trim())}`, {
        reviewValue: form.reviewValue,
        note: form.note,
        ...(form.dueAt ? { dueAt: form.dueAt } : {}),
        ...(form.subsidiaryDid ? { subsidiaryDid: form.subsidiaryDid } : {}),
      });
      setMessage({ kind: 'success', text: `Saved: ${saved.vaspDid} is ${saved.reviewValue}` });
      setForm(EMPTY_FORM);
      void load();
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  };
  const edit = (r: Review) =>
    setForm({
      vaspDid: r.vaspDid,
      reviewValue: r.reviewValue,
      note: r.note,
      dueAt: r.dueAt ? r.dueAt.slice(0, 10) : '',
      subsidiaryDid: r.subsidiaryDid ?? '',
    });
  const overdue = (r: Review) => r.dueAt !== null && Date.parse(r.dueAt) < Date.now();
  return html`<section aria-labelledby="counterparties-title">
    <h2 id="counterparties-title">Counterparties</h2>
    <${Message} kind=${message.kind}>${message.text}<//>
    <form class="row filters" aria-label="Filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <label
        >Review<select name="reviewValue" value=${filters.reviewValue} onChange=${setFilter('reviewValue')}>
          <option value="">any</option>
          ${VALUES.map((v) => html`<option value=${v}>${v}</option>`)}
        </select></label
      >
      <label
        >Due before<input type="date" name="dueBefore" value=${filters.dueBefore} onChange=${setFilter('dueBefore')}
      /></label>
      <label
        >Jurisdiction<input
          name="jurisdiction"
          maxlength="2"
          placeholder="DE"
          value=${filters.jurisdiction}
          onChange=${setFilter('jurisdiction')}
      /></label>
      <label
        >Applies to<select name="subsidiaryDid" value=${filters.subsidiaryDid} onChange=${setFilter('subsidiaryDid')}>
          <option value="">every row</option>
          ${config.subsidiaryDids.map((d) => html`<option value=${d} title=${d}>${label(d)}</option>`)}
        </select></label
      >
    </form>
    <table id="counterparties">
      <thead>
        <tr>
          <th>Counterparty</th>
          <th>For</th>
          <th>Review</th>
          <th>Note</th>
          <th>Reviewed</th>
          <th>Due</th>
          <th>Jurisdiction</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr data-vasp=${r.vaspDid} data-scope=${r.subsidiaryDid ?? 'group'}>
              <td><${VaspName} did=${r.vaspDid} session=${session} /></td>
              <td>${r.subsidiaryDid ? html`<${VaspName} did=${r.subsidiaryDid} session=${session} />` : 'group'}</td>
              <td>
                <span class="badge ${r.reviewValue === 'TRUSTED' ? 'ok' : r.reviewValue === 'BLOCKED' ? 'bad' : ''}"
                  >${r.reviewValue}</span
                >
              </td>
              <td>${r.note}</td>
              <td>${when(r.reviewedAt)} <span class="muted">by ${r.reviewedBy}</span></td>
              <td class=${overdue(r) ? 'bad' : ''}>
                ${r.dueAt ? when(r.dueAt) : '—'}${overdue(r) ? ' (overdue)' : ''}
              </td>
              <td>${r.jurisdiction ?? '—'}</td>
              <td>${canDecide(session) ? html`<button type="button" onClick=${() => edit(r)}>Edit</button>` : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${rows.length === 0 ? html`<p class="muted">No reviews match.</p>` : ''}
    ${next ? html`<button type="button" onClick=${() => load(next)}>More</button>` : ''}
    ${
      canDecide(session)
        ? html`<form class="panel" id="review-form" aria-labelledby="review-title" onSubmit=${save}>
            <h3 id="review-title">Review a counterparty</h3>
            <label
              >Counterparty DID<input name="vaspDid" required value=${form.vaspDid} onInput=${setField('vaspDid')}
            /></label>
            <label
              >Review<select name="reviewValue" value=${form.reviewValue} onChange=${setField('reviewValue')}>
                ${VALUES.map((v) => html`<option value=${v}>${v}</option>`)}
              </select></label
            >
            <label
              >For<select name="subsidiaryDid" value=${form.subsidiaryDid} onChange=${setField('subsidiaryDid')}>
                <option value="">the group</option>
                ${config.subsidiaryDids.map((d) => html`<option value=${d} title=${d}>${label(d)}</option>`)}
              </select></label
            >
            <label>Due again<input type="date" name="dueAt" value=${form.dueAt} onInput=${setField('dueAt')} /></label>
            <label
              >Note<textarea name="note" maxlength="2000" value=${form.note} onInput=${setField('note')}></textarea>
            </label>
            <div class="row" style="margin-top:.6rem"><button type="submit">Save review</button></div>
          </form>`
        : ''
    }
  </section>`;
}
