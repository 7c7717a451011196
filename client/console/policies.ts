// A VASP's decision policy: the active rules as an ordered list to edit (add, remove, move, save as a new version),
// the history, a simulation, a backtest over stored transfers, and the shadow version's comparison. Every change goes
// through PUT /v1/policies/:vaspDID, which keeps each version and audits it.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, canDecide, type ConsoleConfig, type Session } from './api';
import { errorText, html, Message, useVaspLabels, valueOf, when } from './ui';

type Direction = 'incoming' | 'outgoing';
interface Rule {
  order: number;
  actionRule: string;
  ruleCheck: string;
  ruleValue: string;
}
interface Version {
  id: string;
  version: number;
  contentHash: string;
  author: string;
  createdAt: string;
  note: string;
  vaspDid: string;
  currency?: string;
  incoming?: Rule[];
  outgoing?: Rule[];
}
interface PolicyState {
  source: string;
  active: Version | null;
  shadow: Version | null;
  history: Version[];
}

const ACTIONS = ['APPROVE', 'REJECT', 'NOT_READY', 'SEND_TO_INBOX'];
const CHECKS = [
  'ALL',
  'VASP',
  'REVIEWED_VASP_LIST',
  'JURISDICTION',
  'RISK_SCORE',
  'SANCTION_LIST_CHECK',
  'TRANSACTION_AMOUNT',
  'TRANSACTION_CREATION_TIME',
  'ASSET',
  'CUSTOMER_JURISDICTION',
];
const renumber = (rules: Rule[]) => rules.map((r, i) => ({ ...r, order: (i + 1) * 10 }));
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

export function Policies({ session, config }: { session: Session; config: ConsoleConfig }) {
  const vasps = [...(config.gatewayDid ? [config.gatewayDid] : []), ...config.subsidiaryDids];
  const label = useVaspLabels(session, vasps);
  const [vasp, setVasp] = useState(vasps[0] ?? '');
  const [state, setState] = useState<PolicyState | null>(null);
  const [currency, setCurrency] = useState('USD');
  const [rules, setRules] = useState<Record<Direction, Rule[]>>({ incoming: [], outgoing: [] });
  const [note, setNote] = useState('');
  const [message, setMessage] = useState<{ kind?: string; text?: string }>({});
  const [facts, setFacts] = useState({ direction: 'incoming', asset: 'ETH', amount: '1', counterpartyDid: '' });
  const [simulation, setSimulation] = useState<string>('');
  const [range, setRange] = useState({ from: daysAgo(30), to: daysAgo(-1) });
  const [backtest, setBacktest] = useState<Record<string, unknown> | null>(null);
  const [shadow, setShadow] = useState<Record<string, unknown> | null>(null);
  const path = `/v1/policies/${encodeURIComponent(vasp)}`;
  const load = useCallback(async () => {
    if (!vasp) return;
    try {
      const s = await api<PolicyState>(session, 'GET', path);
      setState(s);
      setCurrency(s.active?.currency ?? 'USD');
      setRules({ incoming: s.active?.incoming ?? [], outgoing: s.active?.outgoing ?? [] });
      setShadow(await api<Record<string, unknown>>(session, 'GET', `${path}/shadow`));
    } catch (e) {
      setMessage({ kind: 'error', text: errorText(e) });
    }
  }, [session, vasp]);
  useEffect(() => {
    void load();
  }, [load]);

  const edit = (d: Direction, next: Rule[]) => setRules({ ...rules, [d]: renumber(next) });
  const move = (d: Direction, i: number, by: number) => {
    const next = [...rules[d]];
    const j = i + by;
    if (j < 0 || j >= next.length) return;
    [next[i], next[j]] = [next[j]!, next[i]!];
    edit(d, next);
  };
  const document = () => ({ currency, incoming: rules.incoming, outgoing: rules.outgoing });
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await api<{ version: Version; created: boolean }>(session, 'PUT', path, { ...document(), note });
      setMessage({ kind: 'success', text: `Saved as version ${r.version.version}${r.created ? '' : ' (unchanged)'}` });
      setNote('');
      await load();
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  };
  const simulate = async (e: Event) => {
    e.preventDefault();
    try {
      const { counterpartyDid, ...rest } = facts;
      const r = await api<{ decision: { action: string; reason: string } }>(session, 'POST', `${path}/simulate`, {
        facts: { ...rest, ...(counterpartyDid ? { counterpartyDid } : {}) },
      });
      setSimulation(`${r.decision.action}: ${r.decision.reason}`);
    } catch (err) {
      setSimulation(errorText(err));
    }
  };
  const runBacktest = async (e: Event) => {
    e.preventDefault();
    try {
      setBacktest(await api(session, 'POST', `${path}/backtest`, { candidate: document(), ...range }));
    } catch (err) {
      setBacktest({ error: errorText(err) });
    }
  };

  const ruleList = (d: Direction) =>
    html`<fieldset>
      <legend>${d}</legend>
      <ol class="rules" id=${`rules-${d}`}>
        ${rules[d].map(
          (r, i) =>
            html`<li>
              <select
                aria-label="action"
                value=${r.actionRule}
                onChange=${(e: Event) =>
                  edit(
                    d,
                    rules[d].map((x, k) => (k === i ? { ...x, actionRule: valueOf(e) } : x)),
                  )}
              >
                ${ACTIONS.map((a) => html`<option value=${a}>${a}</option>`)}
              </select>
              <select
                aria-label="check"
                value=${r.ruleCheck}
                onChange=${(e: Event) =>
                  edit(
                    d,
                    rules[d].map((x, k) => (k === i ? { ...x, ruleCheck: valueOf(e) } : x)),
                  )}
              >
                ${CHECKS.map((c) => html`<option value=${c}>${c}</option>`)}
              </select>
              <input
                aria-label="value"
                value=${r.ruleValue}
                onInput=${(e: Event) => setRules({ ...rules, [d]: rules[d].map((x, k) => (k === i ? { ...x, ruleValue: valueOf(e) } : x)) })}
              />
              <button type="button" onClick=${() => move(d, i, -1)} aria-label="move up">↑</button>
              <button type="button" onClick=${() => move(d, i, 1)} aria-label="move down">↓</button>
              <button
                type="button"
                onClick=${() =>
                  edit(
                    d,
                    rules[d].filter((_, k) => k !== i),
                  )}
              >
                Remove
              </button>
            </li>`,
        )}
      </ol>
      <button
        type="button"
        onClick=${() => edit(d, [...rules[d], { order: 0, actionRule: 'SEND_TO_INBOX', ruleCheck: 'ALL', ruleValue: '' }])}
      >
        Add rule
      </button>
    </fieldset>`;

  return html`<section aria-labelledby="policies-title">
    <h2 id="policies-title">Policies</h2>
    <label
      >VASP
      <select value=${vasp} onChange=${(e: Event) => setVasp(valueOf(e))}>
        ${vasps.map((d) => html`<option value=${d} title=${d}>${label(d)}${d === config.gatewayDid ? ' (group)' : ''}</option>`)}
      </select></label
    >
    <${Message} kind=${message.kind}>${message.text}<//>
    <p id="policy-active">
      ${
        state?.active
          ? html`Active: version ${state.active.version} (${state.source}) by ${state.active.author},
            ${when(state.active.createdAt)}`
          : 'No policy: the built-in default decides (approve unless screening found a hit).'
      }
      ${state?.shadow ? html` · shadow: version ${state.shadow.version}` : ''}
    </p>
    <form class="panel" onSubmit=${save}>
      <label>Currency<input value=${currency} onInput=${(e: Event) => setCurrency(valueOf(e))} size="4" /></label>
      ${ruleList('incoming')} ${ruleList('outgoing')}
      ${
        canDecide(session)
          ? html`<label>Note<input value=${note} onInput=${(e: Event) => setNote(valueOf(e))} /></label>
              <button type="submit">Save as a new version</button>`
          : ''
      }
    </form>
    <h3>History</h3>
    <table id="policy-history">
      <thead>
        <tr>
          <th>Version</th>
          <th>When</th>
          <th>Author</th>
          <th>Note</th>
          <th>Hash</th>
        </tr>
      </thead>
      <tbody>
        ${(state?.history ?? []).map(
          (v) =>
            html`<tr>
              <td>${v.version}</td>
              <td>${when(v.createdAt)}</td>
              <td>${v.author}</td>
              <td>${v.note}</td>
              <td class="mono">${v.contentHash.slice(0, 12)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Simulate</h3>
    <form class="row" onSubmit=${simulate}>
      <select value=${facts.direction} onChange=${(e: Event) => setFacts({ ...facts, direction: valueOf(e) })}>
        <option value="incoming">incoming</option>
        <option value="outgoing">outgoing</option>
      </select>
      <input
        aria-label="asset"
        value=${facts.asset}
        onInput=${(e: Event) => setFacts({ ...facts, asset: valueOf(e) })}
      />
      <input
        aria-label="amount"
        value=${facts.amount}
        onInput=${(e: Event) => setFacts({ ...facts, amount: valueOf(e) })}
      />
      <input
        aria-label="counterparty DID"
        placeholder="counterparty DID"
        value=${facts.counterpartyDid}
        onInput=${(e: Event) => setFacts({ ...facts, counterpartyDid: valueOf(e) })}
      />
      <button type="submit">Simulate</button>
    </form>
    <p id="simulation">${simulation}</p>
    ${
      canDecide(session)
        ? html`<h3>Backtest the rules above</h3>
            <form class="row" onSubmit=${runBacktest}>
              <label
                >From<input
                  type="date"
                  value=${range.from}
                  onInput=${(e: Event) => setRange({ ...range, from: valueOf(e) })}
              /></label>
              <label
                >To<input type="date" value=${range.to} onInput=${(e: Event) => setRange({ ...range, to: valueOf(e) })}
              /></label>
              <button type="submit" id="run-backtest">Backtest</button>
            </form>
            <pre id="backtest">${backtest ? JSON.stringify(backtest, null, 2) : ''}</pre>`
        : ''
    }
    <h3>Shadow comparison (last 30 days)</h3>
    <pre id="shadow">${shadow ? JSON.stringify(shadow, null, 2) : ''}</pre>
  </section>`;
}
