/**
 * Pushing a VASP's active policy to the network's rules engine, for VASPs whose decisions the network makes. The
 * network knows neither ASSET nor CUSTOMER_JURISDICTION: a policy with them is refused, or pushed without them when
 * the caller says so (the answer lists what was left out, since a missing rule changes which rule matches first).
 */
import type { Pool } from 'pg';
import { recordAuditEntry } from '../audit/store';
import { ConflictError, ValidationError } from '../lib/errors';
import { auditActor, type Principal } from '../lib/principal';
import type { NetworkClient } from '../network/client';
import { setRules, type NetworkRule, type NetworkRuleRecord } from '../network/rules';
import { policiesFor } from './store';
import { DIRECTIONS, NETWORK_RULE_CHECKS, type Direction, type PolicyRule } from './types';

const NETWORK_CHECKS = new Set<string>(NETWORK_RULE_CHECKS);

export interface PushResult {
  policy: { vaspDid: string; versionId: string; version: number; contentHash: string };
  pushed: Record<Direction, number>;
  skipped: { direction: Direction; order: number; ruleCheck: string }[];
  /** The VASP's rules as the network answered them. */
  rules: NetworkRuleRecord[];
}

export async function pushPolicy(
  deps: { pool: Pool; network: NetworkClient; gatewayDid: string },
  request: { vaspDid: string; skipUnsupported: boolean },
  by: Principal,
): Promise<PushResult> {
  const { active } = await policiesFor(deps.pool, request.vaspDid, deps.gatewayDid);
  if (!active)
    throw new ConflictError(`${request.vaspDid} has no policy (neither its own nor the group's) to push`, {
      field: 'vaspDID',
      rule: 'must have an active policy version',
    });
  const skipped = DIRECTIONS.flatMap((direction) =>
    active[direction]
      .filter((r) => !NETWORK_CHECKS.has(r.ruleCheck))
      .map((r) => ({ direction, order: r.order, ruleCheck: r.ruleCheck })),
  );
  if (skipped.length && !request.skipUnsupported)
    throw new ValidationError(
      'skipUnsupported',
      `the network does not know ${skipped.map((s) => `${s.direction} rule ${s.order} (${s.ruleCheck})`).join(', ')}: remove them, or push the rest with skipUnsupported: true`,
      { unsupported: skipped },
    );
  const toNetwork = (rules: PolicyRule[]): NetworkRule[] =>
    rules
      .filter((r) => NETWORK_CHECKS.has(r.ruleCheck))
      .map(({ order, actionRule, ruleCheck, ruleValue, source }) => ({
        order,
        actionRule,
        ruleCheck,
        ruleValue,
        ...(source ? { source } : {}),
      }));
  const ruleSet = { incoming: toNetwork(active.incoming), outgoing: toNetwork(active.outgoing) };
  const rules = await setRules(deps.network, request.vaspDid, ruleSet);
  const policy = {
    vaspDid: active.vaspDid,
    versionId: active.id,
    version: active.version,
    contentHash: active.contentHash,
  };
  const pushed = { incoming: ruleSet.incoming.length, outgoing: ruleSet.outgoing.length };
  await recordAuditEntry(deps.pool, {
    actor: auditActor(by),
    action: 'policy.push',
    subject: request.vaspDid,
    details: { principal: by, ...policy, pushed, skipped },
  });
  return { policy, pushed, skipped, rules };
}
