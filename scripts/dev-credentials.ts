import { findApiKeyCredential } from '../auth/api-key-store';
import { createPool } from '../db/pool';
import { parseApiKey } from '../auth/api-key';
import { ROLES, systemPrincipal, type Role } from '../lib/principal';
import { createApiKey } from '../client/api/auth/api-keys';
import type { DemoGroup, DevCredential } from './demo-group';

/**
 * One credential per role for `npm start`. With the sandbox, an access token from its identity provider (/oidc), the
 * orchestrator verifying it exactly as it would a company's provider's; without it (a real network), an API key per
 * role, created once and reused while it is not revoked.
 */
export async function devCredentials(opts: {
  sandboxUrl?: string;
  databaseUrl: string;
  group: DemoGroup;
}): Promise<Record<Role, DevCredential>> {
  const out = {} as Record<Role, DevCredential>;
  if (opts.sandboxUrl) {
    for (const role of ROLES) {
      const client = opts.group.operatorClients[role];
      const r = await fetch(`${opts.sandboxUrl}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }).toString(),
      });
      if (!r.ok)
        throw new Error(`demo: operator token request failed (${r.status}: ${(await r.text()).slice(0, 200)})`);
      const { access_token: token, expires_in: ttl } = (await r.json()) as { access_token: string; expires_in: number };
      out[role] = {
        token,
        kind: 'oidc',
        name: client.name,
        expiresAt: new Date(Date.now() + ttl * 1000).toISOString(),
      };
    }
    return out;
  }
  const pool = createPool(opts.databaseUrl, 'orchestrator');
  try {
    for (const role of ROLES) {
      const known = opts.group.operators?.[role];
      const parsed = known?.kind === 'api-key' ? parseApiKey(known.token) : undefined;
      const stored = parsed && (await findApiKeyCredential(pool, parsed.prefix));
      if (known && stored && !stored.revoked && stored.secretSha256.equals(parsed.secretSha256)) {
        out[role] = known;
        continue;
      }
      const { key, info } = await createApiKey(pool, { name: `dev-${role}`, role }, systemPrincipal('npm-start'));
      out[role] = { token: key, kind: 'api-key', name: info.name };
    }
    return out;
  } finally {
    await pool.end();
  }
}
