// The address book per subsidiary: its reconciliation runs and reports, starting one, importing a CSV.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, canOperate, type ConsoleConfig, type Page, type Session } from './api';
import { errorText, html, Message, valueOf, when } from './ui';

interface Run {
  startedAt: string;
  trigger: string;
  mode: string;
  status: string;
  phase: string;
  toAdd?: number | null;
  toUpdate?: number | null;
  toRemove?: number | null;
  rejected: number;
}

interface Report {
  status: string;
  finishedAt: string;
  durationMs: number;
  added: number;
  updated: number;
  removed: number;
  rejected: number;
  rejectedRows: { address: string; reason: string }[];
}

/** asset,address,customerRef[,vaspDID][,tag] with a header row; quoted cells may hold commas. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quoted) {
        if (c === '"' && line[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (c === '"') quoted = false;
        else cell += c;
      } else if (c === '"') quoted = true;
      else if (c === ',') {
        cells.push(cell);
        cell = '';
      } else cell += c;
    }
    cells.push(cell);
    rows.push(cells);
  }
  const header = (rows.shift() || []).map((x) => x.trim());
  return rows.map((cells) => Object.fromEntries(header.map((name, i) => [name, (cells[i] ?? '').trim()])));
}

export function AddressBook({ session, config }: { session: Session; config: ConsoleConfig }) {
  const [vasp, setVasp] = useState(config.subsidiaryDids[0] || '');
  const [runs, setRuns] = useState<Run[]>([]);
  const [reports, setReports] = useState<Report[]>([]);
  const [message, setMessage] = useState<{ kind?: string; text?: string }>({});
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  const load = useCallback(async () => {
    try {
      setRuns(
        (await api<Page<Run>>(session, 'GET', `/v1/address-book/runs?vaspDID=${encodeURIComponent(vasp)}&limit=20`))
          .data,
      );
      setReports(
        (
          await api<{ reports: Report[] }>(
            session,
            'GET',
            `/v1/address-book/${encodeURIComponent(vasp)}/reports?limit=5&rejectedRows=5`,
          )
        ).reports,
      );
    } catch (e) {
      setMessage({ kind: 'error', text: errorText(e) });
    }
  }, [session, vasp]);
  useEffect(() => {
    void load();
  }, [load]);
  const reconcile = async () => {
    try {
      const r = await api<{ workflowId: string }>(
        session,
        'POST',
        `/v1/address-book/${encodeURIComponent(vasp)}/reconcile`,
        { trigger: 'api' },
      );
      setMessage({ kind: 'success', text: `Reconciliation started (${r.workflowId}).` });
      setTimeout(load, 1500);
    } catch (e) {
      setMessage({ kind: 'error', text: errorText(e) });
    }
  };
  const upload = async (e: Event) => {
    e.preventDefault();
    const file = fileRef.current?.files?.[0];
    if (!file)
      return setMessage({
        kind: 'error',
        text: 'Choose a CSV file (columns asset, address, customerRef; optional tag).',
      });
    const entries = parseCsv(await file.text()).map((r) => ({
      asset: r.asset,
      address: r.address,
      customerRef: r.customerRef,
      vaspDID: r.vaspDID || vasp,
      ...(r.tag ? { tag: r.tag } : {}),
    }));
    const batch = 1000;
    let done = 0;
    setProgress({ done: 0, total: entries.length });
    try {
      for (let i = 0; i < entries.length; i += batch) {
        await api(session, 'PUT', '/v1/addresses', { addresses: entries.slice(i, i + batch) });
        done = Math.min(entries.length, i + batch);
        setProgress({ done, total: entries.length });
      }
      setMessage({
        kind: 'success',
        text: `${entries.length} addresses imported into the registry. Start a reconciliation to push them to the network.`,
      });
    } catch (err) {
      setMessage({
        kind: 'error',
        text: `Stopped after ${done} of ${entries.length} rows (rows ${done + 1}–${Math.min(entries.length, done + batch)} were refused, nothing of that batch was written): ${errorText(err)}`,
      });
    }
  };
  return html`<section aria-labelledby="ab-title">
    <h2 id="ab-title">Address book</h2>
    <div class="row">
      <label
        >Subsidiary<select value=${vasp} onChange=${(e: Event) => setVasp(valueOf(e))}>
          ${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}
        </select></label
      >
      ${canOperate(session) ? html`<button type="button" onClick=${reconcile}>Start a reconciliation</button>` : ''}
    </div>
    <${Message} kind=${message.kind}>${message.text}<//>
    ${
      canOperate(session)
        ? html`<form class="panel" onSubmit=${upload}>
            <h3>Import a CSV into the registry</h3>
            <div class="row">
              <input type="file" accept=".csv,text/csv" ref=${fileRef} aria-label="CSV file" /><button type="submit">
                Upload
              </button>
              ${progress ? html`<progress max=${progress.total} value=${progress.done}></progress> <span>${progress.done} / ${progress.total}</span>` : ''}
            </div>
          </form>`
        : ''
    }
    <h3>Runs</h3>
    <table>
      <thead>
        <tr>
          <th>Started</th>
          <th>Trigger</th>
          <th>Mode</th>
          <th>Status</th>
          <th>Phase</th>
          <th>Added / updated / removed</th>
          <th>Rejected</th>
        </tr>
      </thead>
      <tbody>
        ${runs.map(
          (r) =>
            html`<tr>
              <td>${when(r.startedAt)}</td>
              <td>${r.trigger}</td>
              <td>${r.mode}</td>
              <td>${r.status}</td>
              <td>${r.phase}</td>
              <td>${r.toAdd ?? '—'} / ${r.toUpdate ?? '—'} / ${r.toRemove ?? '—'}</td>
              <td>${r.rejected}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Latest reports</h3>
    ${reports.map(
      (r) =>
        html`<div class="panel">
          <strong>${r.status}</strong> ${when(r.finishedAt)} — ${r.durationMs} ms, added ${r.added}, updated
          ${r.updated}, removed ${r.removed}, rejected ${r.rejected}
          ${
            r.rejectedRows.length
              ? html`<ul>
                  ${r.rejectedRows.map((x) => html`<li><code>${x.address}</code>: ${x.reason}</li>`)}
                </ul>`
              : ''
          }
        </div>`,
    )}
  </section>`;
}
