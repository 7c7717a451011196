// Deposits the custody system reported (GET /v1/deposits): by default the ones whose funds are still held, nearest
// data deadline first; any one status, or all, on request; a subsidiary's only on request; more rows by cursor. An
// undecided deposit is released or returned in its row.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ConsoleConfig, type DepositView, type Page, type Session } from './api';
import { Deadline, DEPOSIT_STATUSES, DepositActions, depositLink, HELD_STATUSES } from './deposit';
import { Shortened } from './proof';
import { Amount, errorText, html, Message, StatusBadge, valueOf, VaspName } from './ui';

const HELD = 'held';

/**
 * The route filters by one status: the held ones are read as one list per status, each paged by its own cursor, and
 * each read's rows merged by deadline. `next` keeps the cursor of each status that has more.
 */
function useDepositList(session: Session) {
  const [rows, setRows] = useState<DepositView[] | null>(null);
  const [next, setNext] = useState<Record<string, string>>({});
  const [error, setError] = useState('');
  // Only the latest read is shown: an earlier one answering late (the filter changed meanwhile) is dropped.
  const latest = useRef(0);
  const load = async (statuses: string[], query: URLSearchParams, more?: Record<string, string>) => {
    const reads = more ? Object.keys(more) : statuses;
    const seq = ++latest.current;
    try {
      const pages = await Promise.all(
        reads.map(async (status) => {
          const params = new URLSearchParams(query);
          if (status) params.set('status', status);
          if (more?.[status]) params.set('cursor', more[status]);
          return [status, await api<Page<DepositView>>(session, 'GET', `/v1/deposits?${params}`)] as const;
        }),
      );
      if (seq !== latest.current) return;
      const read = pages.flatMap(([, page]) => page.data);
      if (reads.length > 1) read.sort((a, b) => Date.parse(a.dataDeadlineAt) - Date.parse(b.dataDeadlineAt));
      setRows((shown) => (more ? [...(shown ?? []), ...read] : read));
      setNext(
        Object.fromEntries(pages.flatMap(([status, page]) => (page.nextCursor ? [[status, page.nextCursor]] : []))),
      );
      setError('');
    } catch (e) {
      if (seq === latest.current) setError(errorText(e));
    }
  };
  return { rows, setRows, next, error, load };
}

export function Deposits({ session, config }: { session: Session; config: ConsoleConfig }) {
  const [status, setStatus] = useState(HELD);
  const [subsidiary, setSubsidiary] = useState('');
  const { rows, setRows, next, error, load } = useDepositList(session);
  const [notice, setNotice] = useState('');
  const statuses = status === HELD ? HELD_STATUSES : [status];
  const search = (more?: Record<string, string>) => {
    // Held deposits wait on a deadline: the oldest first. Decided ones read as a history: the newest first.
    const undecided = status === HELD || HELD_STATUSES.includes(status);
    const params = new URLSearchParams({ limit: '50', order: undecided ? 'asc' : 'desc' });
    if (subsidiary) params.set('vaspDid', subsidiary);
    return load(statuses, params, more);
  };
  useEffect(() => {
    void search();
  }, [status, subsidiary]);
  const decided = (updated: DepositView | null, text: string) => {
    setNotice(text);
    if (!updated) return void search();
    setRows((all) => (all ?? []).map((r) => (r.id === updated.id ? updated : r)));
  };
  const more = Object.keys(next).length > 0;
  return html`<section aria-labelledby="deposits-title">
    <h2 id="deposits-title">Deposits</h2>
    <p class="muted">
      Funds that reached the group’s addresses, held until their Travel Rule data arrives, then released or returned.
    </p>
    <form class="filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <label
        >Status<select name="status" value=${status} onChange=${(e: Event) => setStatus(valueOf(e))}>
          <option value=${HELD}>held (${HELD_STATUSES.join(', ')})</option>
          ${DEPOSIT_STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
          <option value="">any</option>
        </select></label
      >
      <label
        >Subsidiary<select name="subsidiary" value=${subsidiary} onChange=${(e: Event) => setSubsidiary(valueOf(e))}>
          <option value="">any</option>
          ${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}
        </select></label
      >
      <button type="button" onClick=${() => void search()}>Refresh</button>
    </form>
    <${Message} kind="success">${notice}<//>
    <${Message}>${error}<//>
    ${
      rows &&
      html`<table id="deposits">
          <thead>
            <tr>
              <th>Subsidiary</th>
              <th>Chain / asset</th>
              <th>Amount</th>
              <th>Destination</th>
              <th>Status</th>
              <th>Reason</th>
              <th>Data deadline</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (d) =>
                html`<tr data-id=${d.id}>
                  <td class="subsidiary"><${VaspName} did=${d.vaspDid} session=${session} /></td>
                  <td class="asset"><a href=${depositLink(d.id)}>${d.chain} / ${d.asset}</a></td>
                  <td class="deposit-amount"><${Amount} amount=${d.amount} asset=${d.asset} config=${config} /></td>
                  <td class="destination"><${Shortened} value=${d.to} /></td>
                  <td class="status"><${StatusBadge} status=${d.status} /></td>
                  <td class="reason">${d.reason ?? '—'}</td>
                  <td class="deadline"><${Deadline} deposit=${d} /></td>
                  <td><${DepositActions} session=${session} deposit=${d} onDone=${decided} /></td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${rows.length === 0 ? html`<p id="deposits-empty">No deposit ${status === HELD ? 'is held' : status ? `is ${status}` : 'yet'}.</p>` : ''}
        ${more ? html`<button type="button" id="deposits-more" onClick=${() => search(next)}>More</button>` : ''}`
    }
  </section>`;
}
