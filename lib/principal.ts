/**
 * Who did something. Every operator action and every automatic decision names one: the decision itself, the
 * workflow's history, the reason sent to the network and the audit row. Workflow-safe (types and constants only).
 */
export const ROLES = ['viewer', 'operator', 'compliance', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** `oidc`: a person signed in at the identity provider; `api-key`: a service; `system`: schedules and automatic rules. */
  kind: 'oidc' | 'api-key' | 'system';
  /** The token's `sub`, the API key's id, or the system component's name. */
  subject: string;
  /** What a person reads in the audit log: the token's name or e-mail, the API key's name. */
  name: string;
  roles: Role[];
  /** Which credential was used: the token's `jti` (or issuer key id), the API key's public prefix. */
  credentialId: string;
}

/** The principal of automatic decisions (screening hits, auto-routing, escalations, rotations, retention). */
export function systemPrincipal(component: string): Principal {
  return { kind: 'system', subject: component, name: component, roles: [], credentialId: component };
}

/**
 * The `actor` of an audit row: a person's or a service's name, and `system:<component>` for the system's own
 * components, as the automatic decisions name them (`system:screening`), so a component never reads as a person.
 */
export function auditActor(principal: Principal): string {
  return principal.kind === 'system' ? `system:${principal.subject}` : principal.name;
}
