import type { Principal } from './principal';

/**
 * A principal in one line, for the reason sent to the network and other text a person reads elsewhere: name, roles,
 * kind and subject, credential. Workflow-safe.
 */
export function describePrincipal(p: Principal): string {
  return `${p.name} (${p.roles.length ? p.roles.join('+') : 'no role'}; ${p.kind} ${p.subject}; credential ${p.credentialId})`;
}
