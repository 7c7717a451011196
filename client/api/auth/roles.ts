import type { Role } from '../../../lib/principal';

/**
 * Who may call what, as routes declare it (`config: { roles: access.operate }`). `admin` is in every set: it
 * administers the system and can act in every capacity.
 */
export const access = {
  /** Transfer metadata, runs, keys' public parts, statuses: every role. */
  read: ['viewer', 'operator', 'compliance', 'admin'],
  /** Sending transfers, starting reconciliations, importing addresses, rotating keys. */
  operate: ['operator', 'admin'],
  /** Decisions, manual routing, decrypted personal data (also through the codec), the audit log. */
  compliance: ['compliance', 'admin'],
  /** Key import and destruction, API keys. */
  admin: ['admin'],
} as const satisfies Record<string, readonly Role[]>;
