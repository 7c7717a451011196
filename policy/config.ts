/** Settings of decisions by policy (environment variables in parentheses); a section of config/index.ts. */
import { isOff, type Env } from '../lib/config-values';

export interface PolicyConfig {
  /**
   * Whether the workflows decide by the policies (POLICY_DECISIONS, on; `off`: screening alone decides incoming
   * transfers, a hit goes to a person, and outgoing transfers are sent, as before policies). The benchmark's baseline.
   */
  decisions: boolean;
}

export function loadPolicyConfig(env: Env): PolicyConfig {
  return { decisions: !isOff(env, 'POLICY_DECISIONS') };
}
