// Signing in: at the company's identity provider (the authorization code flow with PKCE), or by pasting a token.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, SESSION_KEY, type Session } from './api';
import { errorText, html, Message, valueOf } from './ui';

/** The provider the console signs in at (GET /console/sign-in.json). */
interface Oidc {
  issuer: string;
  clientId: string;
  audience: string;
}

/** What waits in sessionStorage while the browser is at the provider's page. */
interface PendingSignIn {
  verifier: string;
  state: string;
  redirectUri: string;
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
}

// The authorization code flow with PKCE (S256), the console being a public client (no secret in a page). The verifier
// and state wait in sessionStorage across the provider's page.
const PKCE_KEY = 'tro-console-sign-in';
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const randomText = (bytes: number) => base64url(crypto.getRandomValues(new Uint8Array(bytes)));
const consoleRedirectUri = () => `${location.origin}/console/`;

async function discover(issuer: string) {
  const r = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!r.ok) throw new Error(`the identity provider's discovery document answered HTTP ${r.status}`);
  const doc = (await r.json()) as { issuer: string; authorization_endpoint: string; token_endpoint: string };
  if (doc.issuer !== issuer) throw new Error(`the identity provider names itself ${doc.issuer}, not ${issuer}`);
  return doc;
}

async function startProviderSignIn(oidc: Oidc) {
  const doc = await discover(oidc.issuer);
  const verifier = randomText(32);
  const state = randomText(16);
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  const redirectUri = consoleRedirectUri();
  const pending: PendingSignIn = {
    verifier,
    state,
    redirectUri,
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    tokenEndpoint: doc.token_endpoint,
  };
  sessionStorage.setItem(PKCE_KEY, JSON.stringify(pending));
  const to = new URL(doc.authorization_endpoint);
  to.search = new URLSearchParams({
    response_type: 'code',
    client_id: oidc.clientId,
    redirect_uri: redirectUri,
    scope: 'openid profile email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    audience: oidc.audience,
  }).toString();
  location.assign(to.toString());
}

/** The access token when the page is the provider's redirect back with a code; null when it is not. */
async function finishProviderSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const pending = JSON.parse(sessionStorage.getItem(PKCE_KEY) || 'null') as PendingSignIn | null;
  sessionStorage.removeItem(PKCE_KEY);
  // The code is single-use and must not stay in the address bar or the history.
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  if (params.has('error'))
    throw new Error(
      `The identity provider refused the sign-in: ${params.get('error_description') || params.get('error')}`,
    );
  if (!pending || params.get('state') !== pending.state)
    throw new Error('This sign-in was not started from this page (its state does not match). Sign in again.');
  if (params.has('iss') && params.get('iss') !== pending.issuer)
    throw new Error('The answer came from another identity provider. Sign in again.');
  const r = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code')!,
      redirect_uri: pending.redirectUri,
      client_id: pending.clientId,
      code_verifier: pending.verifier,
    }).toString(),
  });
  const body = (await r.json().catch(() => ({}))) as {
    access_token?: string;
    error?: string;
    error_description?: string;
  };
  if (!r.ok || !body.access_token)
    throw new Error(
      `The identity provider issued no token: ${body.error_description || body.error || `HTTP ${r.status}`}`,
    );
  return body.access_token;
}

// Who you are comes from the credential: the API answers the name and roles it authenticated (GET /v1/me), and
// records that principal with every decision.
async function sessionFor(token: string): Promise<Session> {
  const me = await api<{ name?: string; roles: string[] }>({ token }, 'GET', '/v1/me');
  const session = { token, name: me.name, roles: me.roles };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [provider, setProvider] = useState<Oidc | null | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<{ oidc: Oidc | null }>(null, 'GET', '/console/sign-in.json').then(
      (c) => setProvider(c.oidc),
      () => setProvider(null),
    );
    finishProviderSignIn()
      .then((t) => (t ? sessionFor(t).then(onSignedIn) : undefined))
      .catch((err: unknown) =>
        setError(
          err instanceof ApiError && err.status === 401
            ? `The API does not accept this sign-in: ${err.message}`
            : errorText(err),
        ),
      );
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!token.trim()) return setError('A token is required.');
    try {
      onSignedIn(await sessionFor(token.trim()));
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? `This token is not accepted: ${err.message}` : errorText(err),
      );
    }
  };
  const viaProvider = async () => {
    setBusy(true);
    setError('');
    try {
      await startProviderSignIn(provider!);
    } catch (err) {
      setBusy(false);
      setError(`Signing in at the identity provider failed: ${(err as Error).message}`);
    }
  };
  const pasteForm = html`<form onSubmit=${submit}>
    <label
      >Bearer token
      <textarea
        id="token"
        value=${token}
        onInput=${(e: Event) => setToken(valueOf(e))}
        autocomplete="off"
        spellcheck="false"
      ></textarea>
    </label>
    <div class="row" style="margin-top:.6rem">
      <button class=${provider ? '' : 'primary'} type="submit" id="token-sign-in">Sign in with the token</button>
    </div>
  </form>`;
  return html`<main class="signin">
    <h2>Sign in to the Travel Rule console</h2>
    ${
      provider
        ? html`<p>Sign in with your company account at <strong>${new URL(provider.issuer).host}</strong>.</p>
            <div class="row">
              <button class="primary" type="button" id="provider-sign-in" disabled=${busy} onClick=${viaProvider}>
                Sign in with your identity provider
              </button>
            </div>
            <details style="margin-top:1.2rem">
              <summary>Use an API key or an access token instead</summary>
              ${pasteForm}
            </details>`
        : html`<p class="muted">
              Paste an access token from your identity provider or an API key; for development,
              <code>npm start</code> prints one per role and writes them to <code>.data/demo.json</code>.
            </p>
            ${pasteForm}`
    }
    <${Message}>${error}<//>
  </main>`;
}
