/**
 * Who did something. Every operator action and every automatic decision names one: the decision itself, the
 * workflow's history, the reason sent to the network and the audit row. Workflow-safe (types and constants only).
 */
export const ROLES = ['viewer', 'operator', 'compliance', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /**
   * `oidc`: a person or service signed in at the identity provider; `api-key`: a service; `cli`: someone running the
   * CLI with the database's credentials; `system`: schedules and automatic rules.
   */
  kind: 'oidc' | 'api-key' | 'cli' | 'system';
  /** The token's `sub`, the API key's id, the OS user running the CLI, or the system component's name. */
  subject: string;
  /** The token's `iss` (oidc only): `subject` is unique within it. */
  issuer?: string;
  /**
   * For display only: the token's name or e-mail, the API key's name. A person can often change these at the
   * identity provider, so nothing that holds someone accountable is keyed or recorded by them (see auditActor).
   */
  name: string;
  roles: Role[];
  /** Which credential was used: the token's `jti` (or issuer key id), the API key's public prefix. */
  credentialId: string;
}

/** The principal of automatic decisions (screening hits, auto-routing, escalations, rotations, retention). */
export function systemPrincipal(component: string): Principal {
  return { kind: 'system', subject: component, name: component, roles: [], credentialId: component };
}

/** Whoever runs a CLI command that writes to the database directly (it holds DATABASE_URL, so no token is asked). */
export function cliPrincipal(osUser: string): Principal {
  return { kind: 'cli', subject: osUser, name: `cli:${osUser}`, roles: [], credentialId: 'DATABASE_URL' };
}

const ACTOR_PREFIX: Record<Principal['kind'], string> = {
  oidc: 'oidc',
  'api-key': 'apikey',
  cli: 'cli',
  system: 'system',
};

/**
 * Who is held accountable, as audit rows, decisions, key rotations and API keys record it: the kind's prefix and the
 * stable subject, never the display name. `oidc:<sub>` (the issuer keeps `sub` for the account, where a name or
 * e-mail can be changed by its owner), `apikey:<id>`, `cli:<OS user>`, and `system:<component>` for the system's own
 * components (`system:screening`). Only code makes a `system` principal, and every other kind has its own prefix, so
 * no token, key or name can ever read as a component or as another person.
 */
export function auditActor(principal: Principal): string {
  return `${ACTOR_PREFIX[principal.kind]}:${principal.subject}`;
}

/** A principal as audit details and workflow inputs carry it, or undefined for anything else. */
export function principalIn(value: unknown): Principal | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const p = value as Partial<Principal>;
  return typeof p.kind === 'string' &&
    Object.hasOwn(ACTOR_PREFIX, p.kind) &&
    typeof p.subject === 'string' &&
    p.subject !== ''
    ? (p as Principal)
    : undefined;
}
