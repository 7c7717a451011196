// The compliance console: Preact + htm as ES modules, no build step. Every action goes through the internal API the
// rest of the system uses; this file only renders and calls it. Longer than 400 lines on purpose: without a build step
// every module is one more request and import-map entry, and the pages share the session, API and message helpers.
import { h, render } from 'preact';
import { useEffect, useState, useCallback, useRef } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);
const SESSION_KEY = 'tro-console-session';
const QUEUE_REFRESH_MS = 3000;

// ---------------------------------------------------------------------------------------------------------------
// Session and API

function loadSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    return session?.token && Array.isArray(session.roles) ? session : null;
  } catch {
    return null;
  }
}

class ApiError extends Error {
  constructor(status, body) {
    // The API's error shape, or the network's for the agent endpoints (/tx/info).
    super(body?.error?.message || body?.err?.message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.field = body?.error?.field;
  }
}

async function api(session, method, path, body) {
  const headers = {};
  if (session?.token) headers.authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { error: { message: text } };
  }
  if (!r.ok) throw new ApiError(r.status, parsed);
  return parsed;
}

// What the API allows each role (client/api/auth/roles.ts); the API checks it again on every call.
const hasRole = (session, roles) => (session?.roles || []).some((r) => roles.includes(r));
const canDecide = (session) => hasRole(session, ['compliance', 'admin']);
const canOperate = (session) => hasRole(session, ['operator', 'admin']);
const rolesText = (session) => (session.roles.length ? session.roles.join(', ') : 'none');

// ---------------------------------------------------------------------------------------------------------------
// Small pieces

const short = (did) => (did ? (did.length > 26 ? `${did.slice(0, 16)}…${did.slice(-6)}` : did) : '—');
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
// Who acted: the name to read, and the stable id that the audit log records (a name can be changed at the identity provider).
const who = (actor, name) => (name && name !== actor ? `${name} (${actor})` : actor);
const ago = (iso) => {
  if (!iso) return '';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (Math.abs(s) < 90) return s >= 0 ? `${s} s ago` : `in ${-s} s`;
  const m = Math.round(s / 60);
  if (Math.abs(m) < 90) return m >= 0 ? `${m} min ago` : `in ${-m} min`;
  const hr = Math.round(m / 60);
  return hr >= 0 ? `${hr} h ago` : `in ${-hr} h`;
};

function Message({ kind = 'error', children }) {
  if (!children) return null;
  return html`<div class="message ${kind}" role=${kind === 'error' ? 'alert' : 'status'}>${children}</div>`;
}

function StatusBadge({ status }) {
  const kind = ['ACCEPTED'].includes(status) ? 'ok' : ['DECLINED', 'REJECTED', 'FAILED', 'CANCELLED', 'EXPIRED'].includes(status) ? 'bad' : '';
  return html`<span class="badge ${kind}" data-status=${status}>${status}</span>`;
}

function hitsText(hits) {
  // The API leaves the field out for roles that may not read screening hits (compliance and admin may).
  if (hits === undefined) return 'shown to the compliance role only';
  if (!hits) return '—';
  const names = (hits.nameHits || []).map((x) => `${x.matchedName} (${x.list} #${x.entNum}, ${Math.round(x.score * 100)} %)`);
  const addresses = (hits.addressHits || []).map((x) => `address on ${x.list}`);
  const all = [...names, ...addresses];
  if (hits.skipped === 'undecryptable') all.push('personal data could not be decrypted');
  return all.length ? all.join('; ') : 'none';
}

function errorText(e) {
  if (e instanceof ApiError) {
    if (e.status === 401) return 'You are not signed in, or your sign-in expired. Sign in again.';
    if (e.status === 403) return `Your role may not do this: ${e.message}`;
    return e.field ? `${e.message}` : e.message;
  }
  return `The console could not reach the API: ${e.message}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Sign-in

// Signing in at the company's identity provider: the authorization code flow with PKCE (S256), the console being a
// public client (no secret in a page). The verifier and state wait in sessionStorage across the provider's page.
const PKCE_KEY = 'tro-console-sign-in';
const base64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const randomText = (bytes) => base64url(crypto.getRandomValues(new Uint8Array(bytes)));
const consoleRedirectUri = () => `${location.origin}/console/`;

async function discover(issuer) {
  const r = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!r.ok) throw new Error(`the identity provider's discovery document answered HTTP ${r.status}`);
  const doc = await r.json();
  if (doc.issuer !== issuer) throw new Error(`the identity provider names itself ${doc.issuer}, not ${issuer}`);
  return doc;
}

async function startProviderSignIn(oidc) {
  const doc = await discover(oidc.issuer);
  const verifier = randomText(32);
  const state = randomText(16);
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const redirectUri = consoleRedirectUri();
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state, redirectUri, issuer: oidc.issuer, clientId: oidc.clientId, tokenEndpoint: doc.token_endpoint }));
  const to = new URL(doc.authorization_endpoint);
  to.search = new URLSearchParams({
    response_type: 'code', client_id: oidc.clientId, redirect_uri: redirectUri, scope: 'openid profile email', state,
    code_challenge: challenge, code_challenge_method: 'S256', audience: oidc.audience,
  }).toString();
  location.assign(to.toString());
}

/** The access token when the page is the provider's redirect back with a code; null when it is not. */
async function finishProviderSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const pending = JSON.parse(sessionStorage.getItem(PKCE_KEY) || 'null');
  sessionStorage.removeItem(PKCE_KEY);
  // The code is single-use and must not stay in the address bar or the history.
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  if (params.has('error')) throw new Error(`The identity provider refused the sign-in: ${params.get('error_description') || params.get('error')}`);
  if (!pending || params.get('state') !== pending.state) throw new Error('This sign-in was not started from this page (its state does not match). Sign in again.');
  if (params.has('iss') && params.get('iss') !== pending.issuer) throw new Error('The answer came from another identity provider. Sign in again.');
  const r = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: params.get('code'), redirect_uri: pending.redirectUri, client_id: pending.clientId,
      code_verifier: pending.verifier,
    }).toString(),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok || !body.access_token) throw new Error(`The identity provider issued no token: ${body.error_description || body.error || `HTTP ${r.status}`}`);
  return body.access_token;
}

// Who you are comes from the credential: the API answers the name and roles it authenticated (GET /v1/me), and
// records that principal with every decision.
async function sessionFor(token) {
  const me = await api({ token }, 'GET', '/v1/me');
  const session = { token, name: me.name, roles: me.roles };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

function SignIn({ onSignedIn }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [provider, setProvider] = useState(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api(null, 'GET', '/console/sign-in.json').then((c) => setProvider(c.oidc), () => setProvider(null));
    finishProviderSignIn().then(
      (t) => t && sessionFor(t).then(onSignedIn),
    ).catch((err) => setError(err instanceof ApiError && err.status === 401 ? `The API does not accept this sign-in: ${err.message}` : errorText(err)));
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    if (!token.trim()) return setError('A token is required.');
    try {
      onSignedIn(await sessionFor(token.trim()));
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? `This token is not accepted: ${err.message}` : errorText(err));
    }
  };
  const viaProvider = async () => {
    setBusy(true);
    setError('');
    try {
      await startProviderSignIn(provider);
    } catch (err) {
      setBusy(false);
      setError(`Signing in at the identity provider failed: ${err.message}`);
    }
  };
  const pasteForm = html`<form onSubmit=${submit}>
      <label>Bearer token
        <textarea id="token" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} autocomplete="off" spellcheck="false"></textarea>
      </label>
      <div class="row" style="margin-top:.6rem">
        <button class=${provider ? '' : 'primary'} type="submit" id="token-sign-in">Sign in with the token</button>
      </div>
    </form>`;
  return html`<main class="signin">
    <h2>Sign in to the Travel Rule console</h2>
    ${provider ? html`<p>Sign in with your company account at <strong>${new URL(provider.issuer).host}</strong>.</p>
      <div class="row"><button class="primary" type="button" id="provider-sign-in" disabled=${busy} onClick=${viaProvider}>Sign in with your identity provider</button></div>
      <details style="margin-top:1.2rem"><summary>Use an API key or an access token instead</summary>${pasteForm}</details>`
    : html`<p class="muted">Paste an access token from your identity provider or an API key; for development, <code>npm start</code>
      prints one per role and writes them to <code>.data/demo.json</code>.</p>${pasteForm}`}
    <${Message}>${error}<//>
  </main>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Review queue

function Queue({ session }) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState('');
  const [refreshedAt, setRefreshedAt] = useState(null);
  const load = useCallback(async () => {
    try {
      const page = await api(session, 'GET', '/v1/transfers?needs=either&order=asc&limit=200');
      setRows(page.data);
      setError('');
      setRefreshedAt(new Date());
    } catch (e) {
      setError(errorText(e));
    }
  }, [session]);
  useEffect(() => {
    load();
    const timer = setInterval(load, QUEUE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);
  return html`<section aria-labelledby="queue-title">
    <h2 id="queue-title">Review queue</h2>
    <p class="muted" aria-live="polite">Transfers waiting for a person, oldest first. Refreshed every ${QUEUE_REFRESH_MS / 1000} s${refreshedAt ? `, last at ${refreshedAt.toLocaleTimeString()}` : ''}.</p>
    <${Message}>${error}<//>
    ${rows === null ? html`<p>Loading…</p>` : rows.length === 0 ? html`<p id="queue-empty">Nothing waits for review or routing.</p>` : html`
    <table id="queue">
      <thead><tr><th>Received</th><th>Waiting for</th><th>Screening hits</th><th>Deadline</th><th>Counterparty</th><th>Subsidiary</th><th>Amount</th><th>Transaction</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr class="clickable" data-id=${r.id}>
        <td>${when(r.createdAt)}</td>
        <td>${r.needsReview ? html`<span class="badge warn">screening review</span>` : html`<span class="badge warn">routing</span>`}</td>
        <td class="hits">${r.needsReview ? hitsText(r.hits) : '—'}</td>
        <td>${when(r.deadlineAt)} <span class="muted">${ago(r.deadlineAt)}</span> ${r.escalated ? html`<span class="badge bad">escalated</span>` : ''}</td>
        <td class="mono" title=${r.counterpartyDid}>${short(r.counterpartyDid)}</td>
        <td class="mono" title=${r.subsidiaryDid || ''}>${short(r.subsidiaryDid)}</td>
        <td>${r.amount ?? '—'} ${r.asset ?? ''}</td>
        <td><a href=${`#/transfer/${encodeURIComponent(r.workflowId)}`}>${r.id}</a></td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Transfer page

function Timeline({ view, details }) {
  if (!details) return html`<p class="muted">The workflow's history is not available.</p>`;
  const entries = view.direction === 'incoming'
    ? details.history.map((e) => ({ at: e.at, what: e.event, detail: e.detail }))
    : details.history.map((e) => ({ at: e.at, what: e.status, detail: { source: e.source } }));
  return html`<ol class="timeline">${entries.map((e) => html`<li>
    <strong>${e.what}</strong> <span class="muted">${when(e.at)}</span>
    ${e.detail ? html`<div class="muted">${Object.entries(e.detail).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' · ')}</div>` : ''}
  </li>`)}</ol>`;
}

function DecisionForm({ session, view, onDone, onStale }) {
  const [decision, setDecision] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (!decision) return setError('Choose accept or decline.');
    if (!reason.trim()) return setError('A reason is required: it is recorded with the decision and sent to the network.');
    setBusy(true);
    try {
      // A page that no longer shows the transfer as it is must not decide it: the reviewer reads the new state first.
      const now = await api(session, 'GET', `/v1/transfers/list/${encodeURIComponent(view.workflowId)}`);
      if (now.version !== view.version || !now.needsReview) {
        setBusy(false);
        return onStale(`Your decision was not sent: this page was out of date. The transfer changed since you opened it (now ${now.status}, ${now.phase}${now.decision ? `, decided by ${who(now.decision.actor, now.decision.principal?.name)}` : ''}); the page now shows its current state.`);
      }
      await api(session, 'POST', `/v1/transfers/${encodeURIComponent(view.id)}/decision`, {
        decision: decision === 'accept' ? 'approve' : 'decline', reason: reason.trim(),
      });
      onDone(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setBusy(false);
        return onStale(`This transfer cannot be decided now: ${err.message}. Another reviewer may have decided it; the page now shows its current state.`);
      }
      setError(errorText(err));
    }
    setBusy(false);
  };
  return html`<form id="decision-form" onSubmit=${submit} class="panel">
    <h3>Decide</h3>
    <fieldset class="row" style="border:0;padding:0">
      <legend class="sr-only">Decision</legend>
      <label class="row" style="flex-direction:row"><input type="radio" name="decision" value="accept" checked=${decision === 'accept'} onChange=${() => setDecision('accept')} /> Accept</label>
      <label class="row" style="flex-direction:row"><input type="radio" name="decision" value="decline" checked=${decision === 'decline'} onChange=${() => setDecision('decline')} /> Decline</label>
    </fieldset>
    <label>Reason (recorded, and sent to the network on a decline)
      <textarea id="reason" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} maxlength="1000"></textarea>
    </label>
    <div class="row" style="margin-top:.6rem"><button id="decide" class="primary" type="submit" disabled=${busy}>Submit decision</button></div>
    <${Message}>${error}<//>
  </form>`;
}

function RouteForm({ session, view, config, onDone }) {
  const [to, setTo] = useState(config.subsidiaryDids[0] || '');
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    if (!reason.trim()) return setError('A reason is required.');
    try {
      await api(session, 'POST', `/v1/transfers/${encodeURIComponent(view.id)}/route`, { subsidiaryDid: to, reason: reason.trim() });
      onDone(true);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return html`<form id="route-form" onSubmit=${submit} class="panel">
    <h3>Route to a subsidiary</h3>
    <label>Subsidiary<select id="route-to" value=${to} onChange=${(e) => setTo(e.currentTarget.value)}>
      ${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}</select></label>
    <label>Reason<textarea id="route-reason" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} maxlength="1000"></textarea></label>
    <div class="row" style="margin-top:.6rem"><button class="primary" type="submit">Route</button></div>
    <${Message}>${error}<//>
  </form>`;
}

function TransferPage({ session, config, workflowId }) {
  const [view, setView] = useState(null);
  const [details, setDetails] = useState(null);
  const [pii, setPii] = useState(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const load = useCallback(async () => {
    try {
      const v = await api(session, 'GET', `/v1/transfers/list/${encodeURIComponent(workflowId)}`);
      const path = v.direction === 'incoming' ? `/v1/incoming-transfers/${encodeURIComponent(v.id)}` : `/v1/transfers/${encodeURIComponent(v.id)}`;
      // Both together, so the facts and the timeline never show two different moments.
      const d = await api(session, 'GET', path).catch(() => null);
      setView(v);
      setDetails(d);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, workflowId]);
  useEffect(() => { load(); }, [load]);
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
    const tried = [];
    for (const did of [view.subsidiaryDid, config.gatewayDid, undefined].filter((d, i, all) => all.indexOf(d) === i)) {
      try {
        const tx = await api(session, 'GET', `/tx/info?id=${encodeURIComponent(view.transactionId)}${did ? `&vaspDID=${encodeURIComponent(did)}` : ''}`);
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
    <h2 id="transfer-title">${view.direction === 'incoming' ? 'Incoming' : 'Outgoing'} transfer <code>${view.id}</code> <${StatusBadge} status=${view.status} /></h2>
    <${Message} kind="success">${notice}<//>
    <div id="transfer-problem"><${Message}>${problem}<//></div>
    <div class="columns">
      <div>
        <div class="panel"><dl class="facts" id="facts">
          <dt>Status</dt><dd id="status">${view.status}${view.phase ? ` (${view.phase})` : ''}</dd>
          <dt>Waiting for</dt><dd>${view.needsReview ? 'a screening review' : view.needsRouting ? 'routing by a person' : 'nobody'} ${view.escalated ? html`<span class="badge bad">escalated</span>` : ''}</dd>
          <dt>Deadline</dt><dd>${when(view.deadlineAt)}</dd>
          <dt>Subsidiary</dt><dd class="mono">${view.subsidiaryDid ?? '—'}</dd>
          <dt>Counterparty</dt><dd class="mono">${view.counterpartyDid ?? '—'}</dd>
          <dt>Amount</dt><dd>${view.amount ?? '—'} ${view.asset ?? ''}</dd>
          <dt>Transaction id</dt><dd class="mono">${view.transactionId ?? '—'}</dd>
          <dt>Reference</dt><dd class="mono">${view.reference ?? '—'}</dd>
          <dt>Received</dt><dd>${when(view.createdAt)}</dd>
          <dt>Screening hits</dt><dd id="hits">${hitsText(view.hits)}</dd>
          <dt>Workflow</dt><dd><a href=${temporalLink} target="_blank" rel="noopener">${view.workflowId} in the Temporal UI</a></dd>
        </dl></div>
        <div class="panel" id="decisions"><h3>Decisions</h3>
          ${view.decision ? html`<p id="decision">${view.decision.decision === 'approve' ? 'Accepted' : 'Declined'} by <strong>${who(view.decision.actor, view.decision.principal?.name)}</strong> at ${when(view.decision.at)}${view.decision.reason !== undefined ? `: “${view.decision.reason}”` : ''}</p>` : ''}
          ${decisions.filter((d) => d.event === 'route-requested').map((d) => html`<p>Routed to <code>${d.detail.subsidiaryDid}</code> by <strong>${who(d.detail.actor, d.detail.principal?.name)}</strong> at ${when(d.at)}${d.detail.reason !== undefined ? `: “${d.detail.reason}”` : ''}</p>`)}
          ${!view.decision && decisions.length === 0 ? html`<p class="muted">No decision by a person.</p>` : ''}
        </div>
        ${view.needsReview && canDecide(session) ? html`<${DecisionForm} session=${session} view=${view} onDone=${() => { setProblem(''); setNotice('Decision recorded.'); load(); }} onStale=${(text) => { setNotice(''); setProblem(text); load(); }} />` : ''}
        ${view.needsReview && !canDecide(session) ? html`<p class="muted" id="no-decide">Your roles (${rolesText(session)}) may read this transfer but not decide it.</p>` : ''}
        ${view.needsRouting && canDecide(session) ? html`<${RouteForm} session=${session} view=${view} config=${config} onDone=${(ok) => { if (ok) setNotice('Routed.'); load(); }} />` : ''}
      </div>
      <div>
        <div class="panel"><h3>History</h3><${Timeline} view=${view} details=${details} /></div>
        ${canDecide(session) && view.transactionId ? html`<div class="panel"><h3>Personal data (IVMS101)</h3>
          ${pii ? html`<pre class="pii" id="pii">${JSON.stringify(pii, null, 2)}</pre>` : html`<button id="show-pii" type="button" onClick=${showPii}>Decrypt and show</button>`}
        </div>` : ''}
      </div>
    </div>
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Transfers list

const FILTERS = ['direction', 'status', 'needs', 'subsidiary', 'counterparty', 'asset', 'createdFrom', 'createdTo', 'q'];

function Transfers({ session }) {
  const [filters, setFilters] = useState({});
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [error, setError] = useState('');
  const search = async (cursor) => {
    const params = new URLSearchParams();
    for (const k of FILTERS) if (filters[k]) params.set(k, filters[k]);
    if (cursor) params.set('cursor', cursor);
    try {
      const page = await api(session, 'GET', `/v1/transfers?${params}`);
      setRows(cursor ? [...rows, ...page.data] : page.data);
      setNext(page.nextCursor);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => { search(); }, []);
  const input = (name, label, props = {}) => html`<label>${label}<input name=${name} value=${filters[name] || ''} onInput=${(e) => setFilters({ ...filters, [name]: e.currentTarget.value })} ...${props} /></label>`;
  const select = (name, label, options) => html`<label>${label}<select name=${name} value=${filters[name] || ''} onChange=${(e) => setFilters({ ...filters, [name]: e.currentTarget.value })}>
    <option value="">any</option>${options.map((o) => html`<option value=${o}>${o}</option>`)}</select></label>`;
  return html`<section aria-labelledby="transfers-title">
    <h2 id="transfers-title">Transfers</h2>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); search(); }}>
      ${select('direction', 'Direction', ['incoming', 'outgoing'])}
      ${input('status', 'Status', { placeholder: 'ACCEPTED,DECLINED' })}
      ${select('needs', 'Waiting for', ['review', 'routing', 'either'])}
      ${input('subsidiary', 'Subsidiary DID')}
      ${input('counterparty', 'Counterparty DID')}
      ${input('asset', 'Asset')}
      ${input('createdFrom', 'From', { type: 'date' })}
      ${input('createdTo', 'To', { type: 'date' })}
      ${input('q', 'Transaction id or reference')}
      <button class="primary" type="submit">Search</button>
    </form>
    <${Message}>${error}<//>
    ${rows && html`<table id="transfers">
      <thead><tr><th>Created</th><th>Direction</th><th>Status</th><th>Subsidiary</th><th>Counterparty</th><th>Amount</th><th>Transfer</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr class="clickable">
        <td>${when(r.createdAt)}</td><td>${r.direction}</td><td><${StatusBadge} status=${r.status} /> ${r.needsReview || r.needsRouting ? html`<span class="badge warn">waiting</span>` : ''}</td>
        <td class="mono" title=${r.subsidiaryDid || ''}>${short(r.subsidiaryDid)}</td><td class="mono" title=${r.counterpartyDid || ''}>${short(r.counterpartyDid)}</td>
        <td>${r.amount ?? '—'} ${r.asset ?? ''}</td><td><a href=${`#/transfer/${encodeURIComponent(r.workflowId)}`}>${r.id}</a></td>
      </tr>`)}</tbody></table>
      ${rows.length === 0 ? html`<p>No transfer matches.</p>` : ''}
      ${next ? html`<button type="button" onClick=${() => search(next)}>More</button>` : ''}`}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Address book

function parseCsv(text) {
  // asset,address,customerRef[,vaspDID][,tag] with a header row; quoted cells may hold commas.
  const rows = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cells = [];
    let cell = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quoted) {
        if (c === '"' && line[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
      } else if (c === '"') quoted = true; else if (c === ',') { cells.push(cell); cell = ''; } else cell += c;
    }
    cells.push(cell);
    rows.push(cells);
  }
  const header = (rows.shift() || []).map((x) => x.trim());
  return rows.map((cells) => Object.fromEntries(header.map((name, i) => [name, (cells[i] ?? '').trim()])));
}

function AddressBook({ session, config }) {
  const [vasp, setVasp] = useState(config.subsidiaryDids[0] || '');
  const [runs, setRuns] = useState([]);
  const [reports, setReports] = useState([]);
  const [message, setMessage] = useState({});
  const [progress, setProgress] = useState(null);
  const fileRef = useRef(null);
  const load = useCallback(async () => {
    try {
      setRuns((await api(session, 'GET', `/v1/address-book/runs?vaspDID=${encodeURIComponent(vasp)}&limit=20`)).data);
      setReports((await api(session, 'GET', `/v1/address-book/${encodeURIComponent(vasp)}/reports?limit=5&rejectedRows=5`)).reports);
    } catch (e) {
      setMessage({ kind: 'error', text: errorText(e) });
    }
  }, [session, vasp]);
  useEffect(() => { load(); }, [load]);
  const reconcile = async () => {
    try {
      const r = await api(session, 'POST', `/v1/address-book/${encodeURIComponent(vasp)}/reconcile`, { trigger: 'api' });
      setMessage({ kind: 'success', text: `Reconciliation started (${r.workflowId}).` });
      setTimeout(load, 1500);
    } catch (e) {
      setMessage({ kind: 'error', text: errorText(e) });
    }
  };
  const upload = async (e) => {
    e.preventDefault();
    const file = fileRef.current?.files?.[0];
    if (!file) return setMessage({ kind: 'error', text: 'Choose a CSV file (columns asset, address, customerRef; optional tag).' });
    const entries = parseCsv(await file.text()).map((r) => ({ asset: r.asset, address: r.address, customerRef: r.customerRef, vaspDID: r.vaspDID || vasp, ...(r.tag ? { tag: r.tag } : {}) }));
    const batch = 1000;
    let done = 0;
    setProgress({ done: 0, total: entries.length });
    try {
      for (let i = 0; i < entries.length; i += batch) {
        await api(session, 'PUT', '/v1/addresses', { addresses: entries.slice(i, i + batch) });
        done = Math.min(entries.length, i + batch);
        setProgress({ done, total: entries.length });
      }
      setMessage({ kind: 'success', text: `${entries.length} addresses imported into the registry. Start a reconciliation to push them to the network.` });
    } catch (err) {
      setMessage({ kind: 'error', text: `Stopped after ${done} of ${entries.length} rows (rows ${done + 1}–${Math.min(entries.length, done + batch)} were refused, nothing of that batch was written): ${errorText(err)}` });
    }
  };
  return html`<section aria-labelledby="ab-title">
    <h2 id="ab-title">Address book</h2>
    <div class="row">
      <label>Subsidiary<select value=${vasp} onChange=${(e) => setVasp(e.currentTarget.value)}>${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}</select></label>
      ${canOperate(session) ? html`<button type="button" onClick=${reconcile}>Start a reconciliation</button>` : ''}
    </div>
    <${Message} kind=${message.kind}>${message.text}<//>
    ${canOperate(session) ? html`<form class="panel" onSubmit=${upload}><h3>Import a CSV into the registry</h3>
      <div class="row"><input type="file" accept=".csv,text/csv" ref=${fileRef} aria-label="CSV file" /><button type="submit">Upload</button>
      ${progress ? html`<progress max=${progress.total} value=${progress.done}></progress> <span>${progress.done} / ${progress.total}</span>` : ''}</div></form>` : ''}
    <h3>Runs</h3>
    <table><thead><tr><th>Started</th><th>Trigger</th><th>Mode</th><th>Status</th><th>Phase</th><th>Added / updated / removed</th><th>Rejected</th></tr></thead>
      <tbody>${runs.map((r) => html`<tr><td>${when(r.startedAt)}</td><td>${r.trigger}</td><td>${r.mode}</td><td>${r.status}</td><td>${r.phase}</td>
        <td>${r.toAdd ?? '—'} / ${r.toUpdate ?? '—'} / ${r.toRemove ?? '—'}</td><td>${r.rejected}</td></tr>`)}</tbody></table>
    <h3>Latest reports</h3>
    ${reports.map((r) => html`<div class="panel"><strong>${r.status}</strong> ${when(r.finishedAt)} — ${r.durationMs} ms, added ${r.added}, updated ${r.updated}, removed ${r.removed}, rejected ${r.rejected}
      ${r.rejectedRows.length ? html`<ul>${r.rejectedRows.map((x) => html`<li><code>${x.address}</code>: ${x.reason}</li>`)}</ul>` : ''}</div>`)}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Keys

function Keys({ session, config }) {
  const vasps = [...(config.gatewayDid ? [config.gatewayDid] : []), ...config.subsidiaryDids];
  const [state, setState] = useState({});
  const [confirming, setConfirming] = useState(null);
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState({});
  const load = useCallback(async () => {
    const next = {};
    for (const did of vasps) {
      try {
        const keys = (await api(session, 'GET', `/v1/vasps/${encodeURIComponent(did)}/keys`)).keys;
        const rotations = (await api(session, 'GET', `/v1/key-rotations?vaspDID=${encodeURIComponent(did)}&limit=1`)).data;
        next[did] = { active: keys.find((k) => k.state === 'active'), last: rotations[0] };
      } catch (e) {
        next[did] = { error: errorText(e) };
      }
    }
    setState(next);
  }, [session]);
  useEffect(() => { load(); }, [load]);
  const rotate = async (e) => {
    e.preventDefault();
    if (reason.trim().length < 3) return setMessage({ kind: 'error', text: 'Give a reason of 3 characters or more.' });
    try {
      const r = await api(session, 'POST', `/v1/vasps/${encodeURIComponent(confirming)}/keys/rotate`, { reason: reason.trim() });
      setMessage({ kind: 'success', text: `Rotation started: ${r.status}` });
      setConfirming(null);
      setReason('');
      setTimeout(load, 2000);
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  };
  return html`<section aria-labelledby="keys-title">
    <h2 id="keys-title">Keys</h2>
    <${Message} kind=${message.kind}>${message.text}<//>
    <table><thead><tr><th>VASP</th><th>Active key</th><th>Last rotation</th><th></th></tr></thead>
      <tbody>${vasps.map((did) => {
        const s = state[did] || {};
        return html`<tr><td class="mono">${did}${did === config.gatewayDid ? ' (gateway)' : ''}</td>
          <td class="mono">${s.error ? s.error : s.active ? html`${short(s.active.did)} <span class="muted">since ${when(s.active.activatedAt)}</span>` : 'none'}</td>
          <td>${s.last ? html`${s.last.status} ${when(s.last.startedAt)} <span class="muted">by ${s.last.requestedBy}</span>` : '—'}</td>
          <td>${canOperate(session) ? html`<button type="button" onClick=${() => setConfirming(did)}>Rotate…</button>` : ''}</td></tr>`;
      })}</tbody></table>
    ${confirming ? html`<form class="panel" onSubmit=${rotate} role="dialog" aria-labelledby="confirm-title">
      <h3 id="confirm-title">Rotate the key of <code>${confirming}</code>?</h3>
      <p>A new key is published as its <code>pii_didkey</code>; the current key is retired and kept for decrypting older data.</p>
      <label>Reason<input value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} autofocus /></label>
      <div class="row" style="margin-top:.6rem"><button class="danger" type="submit">Yes, rotate</button><button type="button" onClick=${() => setConfirming(null)}>Cancel</button></div>
    </form>` : ''}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Audit log

const AUDIT_FILTERS = ['actor', 'action', 'subject', 'from', 'to'];

function AuditLog({ session }) {
  const [filters, setFilters] = useState({});
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [error, setError] = useState('');
  const query = () => {
    const params = new URLSearchParams();
    for (const k of AUDIT_FILTERS) if (filters[k]) params.set(k, filters[k]);
    return params;
  };
  const search = async (cursor) => {
    const params = query();
    if (cursor) params.set('cursor', cursor);
    try {
      const page = await api(session, 'GET', `/v1/audit-log?${params}`);
      setRows(cursor ? [...rows, ...page.data] : page.data);
      setNext(page.nextCursor);
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  };
  // A download through fetch, so the request carries the Authorization header like every other call.
  const exportCsv = async () => {
    const headers = session?.token ? { authorization: `Bearer ${session.token}` } : {};
    const r = await fetch(`/v1/audit-log/export?${query()}`, { headers });
    if (!r.ok) return setError(errorText(new ApiError(r.status, await r.json().catch(() => ({})))));
    const link = document.createElement('a');
    link.href = URL.createObjectURL(await r.blob());
    link.download = 'audit-log.csv';
    link.click();
    URL.revokeObjectURL(link.href);
  };
  useEffect(() => { search(); }, []);
  const input = (name, label, props = {}) => html`<label>${label}<input name=${name} value=${filters[name] || ''} onInput=${(e) => setFilters({ ...filters, [name]: e.currentTarget.value })} ...${props} /></label>`;
  return html`<section aria-labelledby="audit-title">
    <h2 id="audit-title">Audit log</h2>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); search(); }}>
      ${input('actor', 'Actor')}${input('action', 'Action (or prefix ending in .)', { placeholder: 'incoming.' })}${input('subject', 'Subject')}
      ${input('from', 'From', { type: 'date' })}${input('to', 'To', { type: 'date' })}
      <button class="primary" type="submit">Search</button>
      <button type="button" onClick=${exportCsv}>Export CSV</button>
    </form>
    <${Message}>${error}<//>
    ${rows && html`<table id="audit"><thead><tr><th>At</th><th>Actor</th><th>Action</th><th>Subject</th><th>Details</th><th>Chain</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr><td>${when(r.at)}</td><td>${who(r.actor, r.actorName)}</td><td>${r.action}</td><td class="mono">${r.subject}</td><td class="mono">${JSON.stringify(r.details)}</td>
        <td class="mono" title=${`hash ${r.hash}\nprevious ${r.prevHash}`}>${r.chain} #${r.seq} ${r.hash.slice(0, 12)}…</td></tr>`)}</tbody></table>
      ${rows.length === 0 ? html`<p>No entry matches.</p>` : ''}
      ${next ? html`<button type="button" onClick=${() => search(next)}>More</button>` : ''}`}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------------------
// The shell

const PAGES = [
  ['queue', 'Review queue'],
  ['transfers', 'Transfers'],
  ['address-book', 'Address book'],
  ['keys', 'Keys'],
  ['audit', 'Audit log'],
];

function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/queue');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/queue');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash.slice(2).split('/').map(decodeURIComponent);
}

function App() {
  const [session, setSession] = useState(loadSession());
  const [config, setConfig] = useState(null);
  const [error, setError] = useState('');
  const [page, arg] = useRoute();
  useEffect(() => {
    if (session) api(session, 'GET', '/console/config.json').then(setConfig, (e) => setError(errorText(e)));
  }, [session]);
  if (!session) return html`<${SignIn} onSignedIn=${setSession} />`;
  const signOut = () => {
    sessionStorage.removeItem(SESSION_KEY);
    setSession(null);
  };
  return html`<div>
    <header>
      <h1>Travel Rule console</h1>
      <nav aria-label="Pages">${PAGES.map(([id, label]) => html`<a href=${`#/${id}`} aria-current=${page === id ? 'page' : undefined}>${label}</a>`)}</nav>
      <span class="who" id="who">Signed in as <strong>${session.name}</strong> · roles <strong id="role">${rolesText(session)}</strong></span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main>
      <${Message}>${error}<//>
      ${!config ? html`<p>Loading…</p>`
        : page === 'transfer' ? html`<${TransferPage} key=${arg} session=${session} config=${config} workflowId=${arg} />`
        : page === 'transfers' ? html`<${Transfers} session=${session} />`
        : page === 'address-book' ? html`<${AddressBook} session=${session} config=${config} />`
        : page === 'keys' ? html`<${Keys} session=${session} config=${config} />`
        : page === 'audit' ? html`<${AuditLog} session=${session} />`
        : html`<${Queue} session=${session} />`}
    </main>
  </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
