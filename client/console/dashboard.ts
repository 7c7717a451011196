// The console's first page: the compliance KPIs (GET /v1/kpis) of a date range, for the group or one subsidiary and
// one direction, with their series over time drawn by uPlot (bundled into app.js; no CDN).
import uPlot from 'uplot';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, type ConsoleConfig, type Session } from './api';
import { errorText, html, Message, useVaspLabels, valueOf } from './ui';

interface KpiCounts {
  total: number;
  sent: number;
  answered: number;
  accepted: number;
  identified: number;
  decided: number;
  automated: number;
}
interface KpiRates {
  responseRate: number | null;
  successRate: number | null;
  identificationRate: number | null;
  automationRate: number | null;
}
export interface Kpis extends KpiRates {
  from: string;
  to: string;
  counts: KpiCounts;
  /** `estimated`: from histograms (many answered transfers in the range), else exact. */
  answerSeconds: { median: number | null; p95: number | null; estimated?: boolean };
  byStatus: Record<string, number>;
  byType: Record<string, number>;
  series: ({ start: string; day: string } & KpiCounts & KpiRates)[];
}

const DAY_MS = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/** A rate as the page reads it: one decimal of a percent, or a dash when nothing was counted. */
export const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
/** Seconds as minutes or hours once they are many. */
export const duration = (s: number | null) =>
  s === null
    ? '—'
    : s < 90
      ? `${s.toFixed(s < 10 ? 1 : 0)} s`
      : s < 5400
        ? `${(s / 60).toFixed(1)} min`
        : `${(s / 3600).toFixed(1)} h`;

const RATES: { key: keyof KpiRates; label: string; of: string; stroke: string }[] = [
  { key: 'responseRate', label: 'Response rate', of: 'answered ÷ sent', stroke: '#0b57d0' },
  { key: 'successRate', label: 'Success rate', of: 'accepted ÷ all', stroke: '#137333' },
  { key: 'identificationRate', label: 'Identification rate', of: 'counterparty known ÷ all', stroke: '#8a5a00' },
  { key: 'automationRate', label: 'Automation rate', of: 'decided without a person ÷ decided', stroke: '#7b1fa2' },
];

/** One uPlot chart over the series; redrawn whenever the data changes, removed with the page. */
function Chart({
  id,
  title,
  data,
  series,
}: {
  id: string;
  title: string;
  data: uPlot.AlignedData;
  series: uPlot.Series[];
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const width = Math.max(320, box.current.clientWidth || 640);
    const chart = new uPlot(
      {
        title,
        width,
        height: 260,
        scales: { x: { time: true } },
        series: [{ label: 'Time (UTC)' }, ...series],
        axes: [{}, { size: 60 }],
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      },
      data,
      box.current,
    );
    return () => chart.destroy();
  }, [data]);
  return html`<div class="chart" id=${id} ref=${box} data-points=${data[0].length}></div>`;
}

export function Dashboard({ session, config }: { session: Session; config: ConsoleConfig }) {
  const today = Date.now();
  const [form, setForm] = useState<Record<string, string>>({
    from: isoDay(today - 29 * DAY_MS),
    to: isoDay(today),
    subsidiary: '',
    direction: '',
    bucket: 'day',
  });
  const [kpis, setKpis] = useState<Kpis | null>(null);
  const [shownBucket, setShownBucket] = useState('day');
  const [error, setError] = useState('');
  const load = async () => {
    const params = new URLSearchParams({
      from: `${form.from}T00:00:00Z`,
      // The "to" day is included: the range ends at the end of it.
      to: new Date(Date.parse(`${form.to}T00:00:00Z`) + DAY_MS).toISOString(),
      bucket: form.bucket!,
    });
    if (form.subsidiary) params.set('subsidiary', form.subsidiary);
    if (form.direction) params.set('direction', form.direction);
    try {
      setKpis(await api<Kpis>(session, 'GET', `/v1/kpis?${params}`));
      setShownBucket(form.bucket!);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const set = (name: string) => (e: Event) => setForm({ ...form, [name]: valueOf(e) });
  const vasps = [config.gatewayDid, ...config.subsidiaryDids].filter((d): d is string => !!d);
  const label = useVaspLabels(session, vasps);
  // The charts' data change only with the answer: each chart is drawn again then, not at every keystroke.
  const [rateData, volumeData] = useMemo((): [uPlot.AlignedData, uPlot.AlignedData] => {
    const series = kpis?.series ?? [];
    const times = series.map((p) => Date.parse(p.start) / 1000);
    return [
      [times, ...RATES.map((r) => series.map((p) => (p[r.key] === null ? null : Math.round(p[r.key]! * 1000) / 10)))],
      [times, series.map((p) => p.total), series.map((p) => p.accepted), series.map((p) => p.decided - p.automated)],
    ];
  }, [kpis]);
  const tile = (id: string, label: string, value: string, note: string) =>
    html`<div class="tile" id=${id}>
      <div class="tile-label">${label}</div>
      <div class="tile-value">${value}</div>
      <div class="muted">${note}</div>
    </div>`;
  const table = (id: string, title: string, rows: Record<string, number>) =>
    html`<table id=${id} class="compact">
      <thead>
        <tr>
          <th>${title}</th>
          <th>Transfers</th>
        </tr>
      </thead>
      <tbody>
        ${Object.entries(rows)
          .sort(([, a], [, b]) => b - a)
          .map(
            ([k, n]) =>
              html`<tr data-key=${k}>
                <td>${k}</td>
                <td>${n}</td>
              </tr>`,
          )}
      </tbody>
    </table>`;
  return html`<section aria-labelledby="dashboard-title">
    <h2 id="dashboard-title">Compliance KPIs</h2>
    <form
      class="filters"
      id="kpi-filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        void load();
      }}
    >
      <label
        >Subsidiary<select name="subsidiary" value=${form.subsidiary} onChange=${set('subsidiary')}>
          <option value="">the whole group</option>
          ${vasps.map((d) => html`<option value=${d} title=${d}>${d === config.gatewayDid ? `gateway ${label(d)}` : label(d)}</option>`)}
        </select></label
      >
      <label
        >Direction<select name="direction" value=${form.direction} onChange=${set('direction')}>
          <option value="">both</option>
          <option value="incoming">incoming</option>
          <option value="outgoing">outgoing</option>
        </select></label
      >
      <label>From<input type="date" name="from" value=${form.from} onInput=${set('from')} /></label>
      <label>To (included)<input type="date" name="to" value=${form.to} onInput=${set('to')} /></label>
      <label
        >Per<select name="bucket" value=${form.bucket} onChange=${set('bucket')}>
          <option value="day">day</option>
          <option value="hour">hour</option>
        </select></label
      >
      <button class="primary" type="submit">Show</button>
    </form>
    <${Message}>${error}<//>
    ${
      kpis &&
      html`<div class="tiles" id="kpi-tiles" data-from=${kpis.from} data-to=${kpis.to}>
          ${RATES.map((r) => tile(`kpi-${r.key}`, r.label, percent(kpis[r.key]), `${r.of}`))}
          ${tile('kpi-answer-median', 'Median answer time', `${kpis.answerSeconds.estimated ? '≈ ' : ''}${duration(kpis.answerSeconds.median)}`, `p95 ${kpis.answerSeconds.estimated ? '≈ ' : ''}${duration(kpis.answerSeconds.p95)}`)}
          ${tile('kpi-total', 'Transfers', String(kpis.counts.total), `${kpis.counts.sent} sent, ${kpis.counts.answered} answered, ${kpis.counts.accepted} accepted`)}
        </div>
        ${
          kpis.series.length === 0
            ? html`<p id="kpi-empty">No transfer was created in this range.</p>`
            : html`<${Chart}
                  id="chart-rates"
                  title="Rates (%)"
                  data=${rateData}
                  series=${RATES.map((r) => ({ label: r.label, stroke: r.stroke, width: 2, spanGaps: true }))}
                />
                <${Chart}
                  id="chart-volume"
                  title=${`Transfers per ${shownBucket}`}
                  data=${volumeData}
                  series=${[
                    { label: 'created', stroke: '#1b1f24', width: 2 },
                    { label: 'accepted', stroke: '#137333', width: 2 },
                    { label: 'decided by a person', stroke: '#b3261e', width: 2 },
                  ]}
                />`
        }
        <div class="columns">
          ${table('kpi-by-status', 'Status', kpis.byStatus)} ${table('kpi-by-type', 'Asset', kpis.byType)}
        </div>
        <p class="muted">
          Definitions: the description of <code>GET /v1/kpis</code> in the <a href="/docs" target="_blank">API docs</a>.
          Dates are UTC.
        </p>`
    }
  </section>`;
}
