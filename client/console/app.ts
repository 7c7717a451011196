// The compliance console's entry point: the shell (header, pages, routing by the URL's hash) over the pages of this
// folder. Every action goes through the internal API the rest of the system uses; the console only renders and calls
// it. esbuild bundles this folder into the one script the page loads (client/api/routes/console.ts); Preact and htm
// stay separate modules that index.html's import map names.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, loadSession, rolesText, SESSION_KEY, type ConsoleConfig, type Session } from './api';
import { AddressBook } from './address-book';
import { AuditLog } from './audit';
import { Counterparties } from './counterparties';
import { Dashboard } from './dashboard';
import { DepositPage } from './deposit';
import { Deposits } from './deposits';
import { Keys } from './keys';
import { NewTransfer } from './new-transfer';
import { Policies } from './policies';
import { ProofPage } from './proof';
import { WalletProofs } from './proofs';
import { Queue } from './queue';
import { SignIn } from './sign-in';
import { TransferPage } from './transfer';
import { Transfers } from './transfers';
import { errorText, html, Message } from './ui';

const PAGES = [
  ['dashboard', 'Dashboard'],
  ['queue', 'Review queue'],
  ['transfers', 'Transfers'],
  ['new-transfer', 'New transfer'],
  ['address-book', 'Address book'],
  ['keys', 'Keys'],
  ['counterparties', 'Counterparties'],
  ['deposits', 'Deposits'],
  ['wallet-proofs', 'Wallet proofs'],
  ['policies', 'Policies'],
  ['audit', 'Audit log'],
];

function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/dashboard');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/dashboard');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash.slice(2).split('/').map(decodeURIComponent);
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession());
  const [config, setConfig] = useState<ConsoleConfig | null>(null);
  const [error, setError] = useState('');
  const [page, arg] = useRoute();
  useEffect(() => {
    if (session)
      api<ConsoleConfig>(session, 'GET', '/console/config.json').then(setConfig, (e: unknown) =>
        setError(errorText(e)),
      );
  }, [session]);
  if (!session) return html`<${SignIn} onSignedIn=${setSession} />`;
  const signOut = () => {
    sessionStorage.removeItem(SESSION_KEY);
    setSession(null);
  };
  return html`<div>
    <header>
      <h1>Travel Rule console</h1>
      <nav aria-label="Pages">
        ${PAGES.map(([id, label]) => html`<a href=${`#/${id}`} aria-current=${page === id ? 'page' : undefined}>${label}</a>`)}
      </nav>
      <span class="who" id="who"
        >Signed in as <strong>${session.name}</strong> · roles <strong id="role">${rolesText(session)}</strong></span
      >
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main>
      <${Message}>${error}<//>
      ${
        !config
          ? html`<p>Loading…</p>`
          : page === 'transfer'
            ? html`<${TransferPage} key=${arg} session=${session} config=${config} workflowId=${arg} />`
            : page === 'transfers'
              ? html`<${Transfers} session=${session} config=${config} />`
              : page === 'new-transfer'
                ? html`<${NewTransfer} session=${session} config=${config} />`
                : page === 'address-book'
                  ? html`<${AddressBook} session=${session} config=${config} />`
                  : page === 'keys'
                    ? html`<${Keys} session=${session} config=${config} />`
                    : page === 'counterparties'
                      ? html`<${Counterparties} session=${session} config=${config} />`
                      : page === 'policies'
                        ? html`<${Policies} session=${session} config=${config} />`
                        : page === 'audit'
                          ? html`<${AuditLog} session=${session} />`
                          : page === 'wallet-proofs'
                            ? html`<${WalletProofs} session=${session} />`
                            : page === 'wallet-proof'
                              ? html`<${ProofPage} key=${arg} session=${session} config=${config} id=${arg} />`
                              : page === 'deposits'
                                ? html`<${Deposits} session=${session} config=${config} />`
                                : page === 'deposit'
                                  ? html`<${DepositPage} key=${arg} session=${session} config=${config} id=${arg} />`
                                  : page === 'queue'
                                    ? html`<${Queue} session=${session} config=${config} />`
                                    : html`<${Dashboard} session=${session} config=${config} />`
      }
    </main>
  </div>`;
}

const root = document.getElementById('app')!;
root.textContent = '';
render(html`<${App} />`, root);
