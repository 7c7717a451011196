/** What the workflows say about a policy's decision. Workflow-safe: pure functions, no I/O. */
import type { TransferDecision } from './types';

/** The audit row of an automatic decision: the policy version, the rule matched, the reason and the facts used. */
export function policyAuditDetails({ decision, facts }: TransferDecision): Record<string, unknown> {
  return {
    action: decision.action,
    reason: decision.reason,
    policy: decision.policy,
    rule: decision.rule ?? null,
    ...(decision.override ? { override: decision.override } : {}),
    ...(decision.unknownFact ? { unknownFact: decision.unknownFact } : {}),
    facts,
  };
}
