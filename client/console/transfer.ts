// One transfer: its facts, its history, who decided it, its personal data on request, and the decide or route form.
import { useCallback, useEffect, useState } from 'preact/hooks';
import {
  api,
  ApiError,
  canDecide,
  rolesText,
  type ConsoleConfig,
  type Session,
  type TransferDetails,
  type TransferRow,
} from './api';
import { ClassificationPanel } from './classification';
import { TransferProof } from './proof';
import {
  Amount,
  errorText,
  Fields,
  VaspName,
  hitsText,
  html,
  Message,
  QUEUE_REFRESH_MS,
  StatusBadge,
  valueOf,
  when,
  who,
} from './ui';

function Timeline({ view, details }: { view: TransferRow; details: TransferDetails | null }) {
  if (!details) return html`<p class="muted">The workflow's history is not available.</p>`;
  const entries =
    view.direction === 'incoming'
      ? details.history.map((e) => ({ at: e.at, what: e.event, detail: e.detail }))
      : details.history.map((e) => ({ at: e.at, what: e.status, detail: { source: e.source } }));
  return html`<ol class="timeline">
    ${entries.map(
      (e) =>
        html`<li>
          <strong>${e.what}</strong> <span class="muted">${when(e.at)}</span>
          ${e.detail ? html`<div class="muted"><${Fields} value=${e.detail} /></div>` : ''}
        </li>`,
    )}
  </ol>`;
}

/** Which rule decided the transfer, or that no policy was configured (the built-in default decided). */
function PolicyPanel({ details }: { details: TransferDetails | null }) {
  const decision = details?.policy;
  if (!decision) return '';
  const version = decision.policy
    ? `policy version ${decision.policy.version} of ${decision.policy.vaspDid}`
    : 'the built-in default (no policy configured)';
  return html`<div class="panel" id="policy-decision">
    <h3>Policy</h3>
    <p><strong>${decision.action}</strong> under ${version}</p>
    ${decision.rule ? html`<p>Rule ${decision.rule.order}: <code>${decision.rule.ruleCheck} ${decision.rule.ruleValue}</code> → ${decision.rule.actionRule}</p>` : html`<p class="muted">No rule matched.</p>`}
    <p class="muted" id="policy-reason">${decision.reason}</p>
    ${decision.override ? html`<p class="badge bad">overridden: ${decision.override}</p>` : ''}
  </div>`;
}

/**
 * Whether the custody system may broadcast an outgoing transfer's funds: the one transfer.release or transfer.halt the
 * transfer announces, by the sending subsidiary's rule. Before that the rule is not known here: only the API applies it.
 */
function BroadcastPanel({ details }: { details: TransferDetails | null }) {
  if (!details) return '';
  const b = details.broadcast;
  return html`<div class="panel" id="broadcast">
    <h3>Custody</h3>
    ${
      b
        ? html`<dl class="facts">
            <dt>Broadcast</dt>
            <dd id="broadcast-event">
              ${
                b.event === 'transfer.release'
                  ? html`<span class="badge ok">Funds may be broadcast</span> `
                  : html`<span class="badge bad">Do not broadcast</span> `
              }
              <span class="muted">${b.event}</span>
            </dd>
            <dt>Rule</dt>
            <dd id="broadcast-rule"><code>${b.rule}</code></dd>
            <dt>Reason</dt>
            <dd id="broadcast-reason">${b.reason}</dd>
            <dt>Decided</dt>
            <dd id="broadcast-at">${when(b.at)}</dd>
          </dl>`
        : html`<p class="muted" id="broadcast-event">Not decided yet.</p>`
    }
  </div>`;
}

/** Release or refuse an outgoing transfer the policy held (status HELD). */
function ReleaseForm({ session, view, onDone }: { session: Session; view: TransferRow; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const send = async (decision: 'release' | 'refuse') => {
    if (!reason.trim()) return setError('A reason is required: it is recorded with the decision.');
    setBusy(true);
    try {
      await api(session, 'POST', `/v1/transfers/${encodeURIComponent(view.id)}/review`, { decision, reason });
      setError('');
      onDone();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return html`<form id="release-form" class="panel" onSubmit=${(e: Event) => e.preventDefault()}>
    <h3>Held by the policy</h3>
    <label
      >Reason
      <input
        id="release-reason"
        value=${reason}
        onInput=${(e: Event) => setReason((e.target as HTMLInputElement).value)}
    /></label>
    <${Message}>${error}<//>
    <button id="release" class="primary" type="button" disabled=${busy} onClick=${() => send('release')}>
      Release and send
    </button>
    <button id="refuse" type="button" disabled=${busy} onClick=${() => send('refuse')}>Refuse</button>
  </form>`;
}

function DecisionForm({
  session,
  view,
  onDone,
  onStale,
}: {
  session: Session;
  view: TransferRow;
  onDone: (ok: boolean) => void;
  onStale: (text: string) => void;
}) {
  const [decision, setDecision] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!decision) return setError('Choose accept or decline.');
    if (!reason.trim())
      return setError('A reason is required: it is recorded with the decision and sent to the network.');
    setBusy(true);
    try {
      // A page that no longer shows the transfer as it is must not decide it: the reviewer reads the new state first.
      const now = await api<TransferRow>(session, 'GET', `/v1/transfers/list/${encodeURIComponent(view.workflowId)}`);
      if (now.version !== view.version || !now.needsReview) {
        setBusy(false);
        return onStale(
          `Your decision was not sent: this page was out of date. The transfer changed since you opened it (now ${now.status}, ${now.phase}${now.decision ? `, decided by ${who(now.decision.actor, now.decision.principal?.name)}` : ''}); the page now shows its current state.`,
        );
      }
      await api(session, 'POST', `/v1/transfers/${encodeURIComponent(view.id)}/decision`, {
        decision: decision === 'accept' ? 'approve' : 'decline',
        reason: reason.trim(),
      });
      onDone(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setBusy(false);
        return onStale(
          `This transfer cannot be decided now: ${err.message}. Another reviewer may have decided it; the page now shows its current state.`,
        );
      }
      setError(errorText(err));
    }
    setBusy(false);
  };
  return html`<form id="decision-form" onSubmit=${submit} class="panel">
    <h3>Decide</h3>
    <fieldset class="row" style="border:0;padding:0">
      <legend class="sr-only">Decision</legend>
      <label class="row" style="flex-direction:row"
        ><input
          type="radio"
          name="decision"
          value="accept"
          checked=${decision === 'accept'}
          onChange=${() => setDecision('accept')}
        />
        Accept</label
      >
      <label class="row" style="flex-direction:row"
        ><input
          type="radio"
          name="decision"
          value="decline"
          checked=${decision === 'decline'}
          onChange=${() => setDecision('decline')}
        />
        Decline</label
      >
    </fieldset>
    <label
      >Reason (recorded, and sent to the network on a decline)
      <textarea id="reason" value=${reason} onInput=${(e: Event) => setReason(valueOf(e))} maxlength="1000"></textarea>
    </label>
    <div class="row" style="margin-top:.6rem">
      <button id="decide" class="primary" type="submit" disabled=${busy}>Submit decision</button>
    </div>
    <${Message}>${error}<//>
  </form>`;
}

function RouteForm({
  session,
  view,
  config,
  onDone,
}: {
  session: Session;
  view: TransferRow;
  config: ConsoleConfig;
  onDone: (ok: boolean) => void;
}) {
  const [to, setTo] = useState(config.subsidiaryDids[0] || '');
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!reason.trim()) return setError('A reason is required.');
    try {
      await api(session, 'POST', `/v1/transfers/${encodeURIComponent(view.id)}/route`, {
        subsidiaryDid: to,
        reason: reason.trim(),
      });
      onDone(true);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return html`<form id="route-form" onSubmit=${submit} class="panel">
    <h3>Route to a subsidiary</h3>
    <label
      >Subsidiary<select id="route-to" value=${to} onChange=${(e: Event) => setTo(valueOf(e))}>
        ${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}
      </select></label
    >
    <label
      >Reason<textarea
        id="route-reason"
        value=${reason}
        onInput=${(e: Event) => setReason(valueOf(e))}
        maxlength="1000"
      ></textarea>
    </label>
    <div class="row" style="margin-top:.6rem"><button class="primary" type="submit">Route</button></div>
    <${Message}>${error}<//>
  </form>`;
}

export function TransferPage({
  session,
  config,
  workflowId,
}: {
  session: Session;
  config: ConsoleConfig;
  workflowId: string;
}) {
  const [view, setView] = useState<TransferRow | null>(null);
  const [details, setDetails] = useState<TransferDetails | null>(null);
  const [pii, setPii] = useState<unknown>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const load = useCallback(async () => {
    try {
      const v = await api<TransferRow>(session, 'GET', `/v1/transfers/list/${encodeURIComponent(workflowId)}`);
      const path =
        v.direction === 'incoming'
          ? `/v1/incoming-transfers/${encodeURIComponent(v.id)}`
          : `/v1/transfers/${encodeURIComponent(v.id)}`;
      // Both together, so the facts and the timeline never show two different moments.
      const d = await api<TransferDetails>(session, 'GET', path).catch(() => null);
      setView(v);
      setDetails(d);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, workflowId]);
  useEffect(() => {
    void load();
  }, [load]);
  // A transfer being carried out (a decision on its way to the network, the counterparty's answer) moves on its own:
  // keep the page current. One waiting for a person is not refreshed under the reader; a decision from a page that
  // went stale meanwhile is refused on submit instead.
  useEffect(() => {
    if (!view || view.final || view.needsReview || view.needsRouting) return undefined;
    const timer = setInterval(load, QUEUE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [view?.final, view?.needsReview, view?.needsRouting, load]);
  // The sender encrypted to the key it could see: the subsidiary's, or the gateway's (it sees only the parent).
  const showPii = async () => {
    const tried: string[] = [];
    for (const did of [view!.subsidiaryDid, config.gatewayDid, undefined].filter((d, i, all) => all.indexOf(d) === i)) {
      try {
        const tx = await api<{ ivms101?: unknown }>(
          session,
          'GET',
          `/tx/info?id=${encodeURIComponent(view!.transactionId!)}${did ? `&vaspDID=${encodeURIComponent(did)}` : ''}`,
        );
        if (tx.ivms101) return setPii(tx.ivms101);
      } catch (e) {
        tried.push(errorText(e));
      }
    }
    setPii({ note: 'no personal data could be decrypted with the keys held here', errors: tried });
  };
  if (error) return html`<${Message}>${error}<//>`;
  if (!view) return html`<p>Loading…</p>`;
  const temporalLink = `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(view.workflowId)}`;
  const decisions = details?.history?.filter((e) => e.event === 'decision' || e.event === 'route-requested') ?? [];
  return html`<section aria-labelledby="transfer-title">
    <h2 id="transfer-title">
      ${view.direction === 'incoming' ? 'Incoming' : 'Outgoing'} transfer <code>${view.id}</code>
      <${StatusBadge} status=${view.status} />
    </h2>
    <${Message} kind="success">${notice}<//>
    <div id="transfer-problem"><${Message}>${problem}<//></div>
    <div class="columns">
      <div>
        <div class="panel">
          <dl class="facts" id="facts">
            <dt>Status</dt>
            <dd id="status">${view.status}${view.phase ? ` (${view.phase})` : ''}</dd>
            <dt>Waiting for</dt>
            <dd>
              ${view.needsReview ? (view.direction === 'outgoing' ? 'a person (held by the policy)' : 'a screening review') : view.needsRouting ? 'routing by a person' : 'nobody'}
              ${view.escalated ? html`<span class="badge bad">escalated</span>` : ''}
            </dd>
            <dt>Deadline</dt>
            <dd>${when(view.deadlineAt)}</dd>
            <dt>Subsidiary</dt>
            <dd id="subsidiary"><${VaspName} did=${view.subsidiaryDid} session=${session} /></dd>
            <dt>Counterparty</dt>
            <dd id="counterparty"><${VaspName} did=${view.counterpartyDid} session=${session} /></dd>
            <dt>Amount</dt>
            <dd id="amount"><${Amount} amount=${view.amount} asset=${view.asset} config=${config} /></dd>
            <dt>Transaction id</dt>
            <dd class="mono">${view.transactionId ?? '—'}</dd>
            ${
              view.direction === 'outgoing'
                ? html`<dt>Blockchain transaction</dt>
                    <dd class="mono" id="tx-hash">${details?.txHash ?? '—'}</dd>`
                : ''
            }
            <dt>Reference</dt>
            <dd class="mono">${view.reference ?? '—'}</dd>
            <dt>Received</dt>
            <dd>${when(view.createdAt)}</dd>
            <dt>Screening hits</dt>
            <dd id="hits">${hitsText(view.hits)}</dd>
            <dt>Workflow</dt>
            <dd><a href=${temporalLink} target="_blank" rel="noopener">${view.workflowId} in the Temporal UI</a></dd>
          </dl>
        </div>
        <div class="panel" id="decisions">
          <h3>Decisions</h3>
          ${view.decision ? html`<p id="decision">${view.decision.decision === 'approve' ? 'Accepted' : 'Declined'} by <strong>${who(view.decision.actor, view.decision.principal?.name)}</strong> at ${when(view.decision.at)}${view.decision.reason !== undefined ? `: “${view.decision.reason}”` : ''}</p>` : ''}
          ${decisions.filter((d) => d.event === 'route-requested').map((d) => html`<p>Routed to <code>${d.detail!.subsidiaryDid}</code> by <strong>${who(d.detail!.actor, d.detail!.principal?.name)}</strong> at ${when(d.at)}${d.detail!.reason !== undefined ? `: “${d.detail!.reason}”` : ''}</p>`)}
          ${!view.decision && decisions.length === 0 ? html`<p class="muted">No decision by a person.</p>` : ''}
        </div>
        <${PolicyPanel} details=${details} />
        ${view.direction === 'outgoing' ? html`<${BroadcastPanel} details=${details} />` : ''}
        ${view.direction === 'outgoing' ? html`<${TransferProof} session=${session} status=${view.status} address=${details?.classification?.beneficiaryWallet?.address} />` : ''}
        ${view.direction === 'outgoing' ? html`<${ClassificationPanel} view=${details?.classification} title="Classification (stored with the transfer)" />` : ''}
        ${
          view.direction === 'outgoing' && view.status === 'HELD' && canDecide(session)
            ? html`<${ReleaseForm}
                session=${session}
                view=${view}
                onDone=${() => {
                  setNotice('Decision recorded.');
                  void load();
                }}
              />`
            : ''
        }
        ${
          view.direction === 'incoming' && view.needsReview && canDecide(session)
            ? html`<${DecisionForm}
                session=${session}
                view=${view}
                onDone=${() => {
                  setProblem('');
                  setNotice('Decision recorded.');
                  void load();
                }}
                onStale=${(text: string) => {
                  setNotice('');
                  setProblem(text);
                  void load();
                }}
              />`
            : ''
        }
        ${view.needsReview && !canDecide(session) ? html`<p class="muted" id="no-decide">Your roles (${rolesText(session)}) may read this transfer but not decide it.</p>` : ''}
        ${
          view.needsRouting && canDecide(session)
            ? html`<${RouteForm}
                session=${session}
                view=${view}
                config=${config}
                onDone=${(ok: boolean) => {
                  if (ok) setNotice('Routed.');
                  void load();
                }}
              />`
            : ''
        }
      </div>
      <div>
        <div class="panel">
          <h3>History</h3>
          <${Timeline} view=${view} details=${details} />
        </div>
        ${
          canDecide(session) && view.transactionId
            ? html`<div class="panel">
                <h3>Personal data (IVMS101)</h3>
                ${pii ? html`<pre class="pii" id="pii">${JSON.stringify(pii, null, 2)}</pre>` : html`<button id="show-pii" type="button" onClick=${showPii}>Decrypt and show</button>`}
              </div>`
            : ''
        }
      </div>
    </div>
  </section>`;
}
