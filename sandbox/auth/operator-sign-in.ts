import { createHash, randomBytes } from 'node:crypto';
import type { OperatorClient } from './operator-issuer';

/** A code is exchanged at once by the page it was sent to; a minute covers a slow redirect. */
const CODE_TTL_MS = 60_000;
/** Unexchanged codes kept at most: a flood of sign-ins cannot grow the map without bound. */
const MAX_PENDING_CODES = 10_000;

/** What `/oidc/authorize` was asked for, checked before the sign-in page is shown. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  audience?: string;
}

interface PendingCode {
  request: AuthorizationRequest;
  operator: OperatorClient;
  expiresAt: number;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether `uri` is one the app registered: exactly, or (for an http loopback URI) the same but for the port, which a
 * local app cannot know in advance (RFC 8252, 7.3).
 */
export function redirectUriMatches(registered: readonly string[], uri: string): boolean {
  let asked: URL;
  try {
    asked = new URL(uri);
  } catch {
    return false;
  }
  if (asked.hash || asked.username || asked.password) return false;
  return registered.some((r) => {
    if (r === uri) return true;
    const known = URL.parse(r);
    if (!known) return false;
    return (
      known.protocol === 'http:' &&
      asked.protocol === 'http:' &&
      LOOPBACK_HOSTS.has(known.hostname) &&
      known.hostname === asked.hostname &&
      known.pathname === asked.pathname &&
      known.search === asked.search
    );
  });
}

export { registeredRedirectUris } from './store';

const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/**
 * The authorization codes of the sign-in flow (authorization code with PKCE, S256 only), kept in the sandbox
 * process's memory: one use each, a minute long, bound to the app, the redirect URI and the code challenge.
 */
export class AuthorizationCodes {
  private readonly pending = new Map<string, PendingCode>();

  issue(request: AuthorizationRequest, operator: OperatorClient, now = Date.now()): string {
    for (const [code, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(code);
    if (this.pending.size >= MAX_PENDING_CODES) this.pending.delete(this.pending.keys().next().value!);
    const code = randomBytes(32).toString('base64url');
    this.pending.set(code, { request, operator, expiresAt: now + CODE_TTL_MS });
    return code;
  }

  /** The operator and audience a code was issued for, or the OAuth error that refuses the exchange. */
  redeem(
    exchange: { code: string; clientId: string; redirectUri: string; codeVerifier: string },
    now = Date.now(),
  ): { operator: OperatorClient; audience?: string } | { error: string } {
    const p = this.pending.get(exchange.code);
    // Used, unknown or expired alike: a code is never accepted twice.
    this.pending.delete(exchange.code);
    if (!p || p.expiresAt <= now) return { error: 'the code is unknown, expired or already used' };
    if (p.request.clientId !== exchange.clientId) return { error: 'the code was issued to another client' };
    if (p.request.redirectUri !== exchange.redirectUri)
      return { error: 'redirect_uri differs from the authorization request' };
    if (
      !/^[A-Za-z0-9._~-]{43,128}$/.test(exchange.codeVerifier) ||
      s256(exchange.codeVerifier) !== p.request.codeChallenge
    ) {
      return { error: 'code_verifier does not match the code challenge' };
    }
    return { operator: p.operator, ...(p.request.audience ? { audience: p.request.audience } : {}) };
  }
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The provider's own sign-in page: the request travels in hidden fields, the operator types an email and password. */
export function signInPage(request: AuthorizationRequest, opts: { error?: string; username?: string } = {}): string {
  const hidden = (name: string, value: string | undefined) =>
    value === undefined ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · sandbox identity provider</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.8rem 0}
input[type=text],input[type=password]{width:100%;padding:.4rem;font:inherit}button{padding:.5rem 1.2rem;font:inherit}
.error{color:#a00}</style></head>
<body><main>
<h1>Sign in</h1>
<p>The sandbox's identity provider, standing in for your company's. Application: <strong>${escapeHtml(request.clientId)}</strong></p>
${opts.error ? `<p class="error" role="alert" id="error">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="authorize">
${hidden('client_id', request.clientId)}${hidden('redirect_uri', request.redirectUri)}${hidden('state', request.state)}
${hidden('code_challenge', request.codeChallenge)}${hidden('code_challenge_method', 'S256')}${hidden('response_type', 'code')}
${hidden('audience', request.audience)}
<label>Email or client id <input type="text" name="username" id="username" autocomplete="username" required value="${escapeHtml(opts.username ?? '')}"></label>
<label>Password (client secret) <input type="password" name="password" id="password" autocomplete="current-password" required></label>
<button type="submit" id="sign-in">Sign in</button>
</form></main></body></html>`;
}
