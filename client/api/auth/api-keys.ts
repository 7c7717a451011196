import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import { findApiKeyCredential, insertApiKey, recordApiKeyUse, type ApiKeyInfo } from '../../../auth/api-key-store';
import { newApiKey, parseApiKey } from '../../../auth/api-key';
import { AuthenticationError, ValidationError } from '../../../lib/errors';
import type { Logger } from '../../../lib/logger';
import { ROLES, type Principal, type Role } from '../../../lib/principal';

/** How often one API process writes a key's last-used time: enough to tell a live key from a dead one. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._@:-]{0,99}$/;

/** Creates an API key for a service; the returned `key` is the only time the secret exists outside the caller. */
export async function createApiKey(
  pool: Pool,
  input: { name: string; role: string },
  by: Principal,
): Promise<{ key: string; info: ApiKeyInfo }> {
  if (!NAME.test(input.name))
    throw new ValidationError(
      'name',
      'must be 1 to 100 letters, digits, spaces or . _ @ : - (what the key is for, e.g. core-banking)',
    );
  if (!(ROLES as readonly string[]).includes(input.role))
    throw new ValidationError('role', `must be one of ${ROLES.join(', ')}`);
  const made = newApiKey();
  const info = await insertApiKey(
    pool,
    {
      id: randomUUID(),
      prefix: made.prefix,
      name: input.name,
      role: input.role as Role,
      secretSha256: made.secretSha256,
    },
    by,
  );
  return { key: made.key, info };
}

/**
 * Checks presented API keys against the stored hashes. Every request reads the key's row, so a revocation holds from
 * the next request on; the last-used time is written at most once a minute per key and process.
 */
export class ApiKeyAuthenticator {
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(presented: string): Promise<Principal> {
    const parsed = parseApiKey(presented);
    if (!parsed) throw new AuthenticationError('the API key is malformed', { credential: 'api-key' });
    const stored = await findApiKeyCredential(this.pool, parsed.prefix);
    if (!stored || !timingSafeEqual(stored.secretSha256, parsed.secretSha256)) {
      throw new AuthenticationError(`API key ${parsed.prefix} is not valid`, { credential: 'api-key' });
    }
    if (stored.revoked)
      throw new AuthenticationError(`API key ${parsed.prefix} was revoked`, { credential: 'api-key' });
    this.noteUse(stored.id);
    return {
      kind: 'api-key',
      subject: stored.id,
      name: stored.name,
      roles: [stored.role],
      credentialId: stored.prefix,
    };
  }

  private noteUse(id: string): void {
    const now = this.now();
    const last = this.lastWritten.get(id);
    if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastWritten.set(id, now);
    // Best effort: a missed write costs a slightly older last-used time, never a refused request.
    recordApiKeyUse(this.pool, id, new Date(now)).catch((e: Error) => {
      this.lastWritten.delete(id);
      this.log?.warn({ err: { message: e.message } }, "could not record an API key's last use");
    });
  }
}
