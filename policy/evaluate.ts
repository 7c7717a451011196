/**
 * Evaluates a direction's rules against a transfer's facts: the first rule that matches decides, none → a person.
 * Then the guards: a sanctions hit always goes to a person, and unreadable personal data or a BLOCKED counterparty are
 * never approved, whatever the rules say. Pure: the simulator, the backtest, shadow mode and the workflows' decisions
 * all run this one function.
 */
import { compare, type CompiledRule } from './rules';
import type { DecisionOverride, PolicyDecision, PolicyFacts, PolicyRule } from './types';

/** A version ready to evaluate: its rules compiled once. */
export interface CompiledPolicy {
  ref: PolicyDecision['policy'];
  currency: string;
  rules: CompiledRule[];
}

type Match = { matched: boolean } | { unknown: string };

export function evaluatePolicy(policy: CompiledPolicy, facts: PolicyFacts): PolicyDecision {
  for (const rule of policy.rules) {
    const result = matches(rule, facts);
    if ('unknown' in result) {
      return guard(facts, {
        action: 'SEND_TO_INBOX',
        policy: policy.ref,
        rule: plain(rule),
        unknownFact: result.unknown,
        reason: `rule ${rule.order} (${rule.ruleCheck} ${rule.ruleValue}) needs ${result.unknown}, which is not known`,
      });
    }
    if (result.matched) {
      return guard(facts, {
        action: rule.actionRule,
        policy: policy.ref,
        rule: plain(rule),
        reason: `rule ${rule.order}: ${rule.ruleCheck} ${rule.ruleValue || 'ALL'} matched ${describe(rule, facts, policy.currency)} → ${rule.actionRule}`,
      });
    }
  }
  return guard(facts, { action: 'SEND_TO_INBOX', policy: policy.ref, reason: 'no rule matched' });
}

function matches(rule: CompiledRule, facts: PolicyFacts): Match {
  switch (rule.kind) {
    case 'all':
      return { matched: true };
    case 'set': {
      const fact = setFact(rule, facts);
      if (fact === undefined) return { unknown: factName(rule) };
      return { matched: rule.values.has(fact) };
    }
    case 'compare': {
      const fact = rule.ruleCheck === 'RISK_SCORE' ? facts.riskScore : facts.amountFiat;
      if (fact === undefined) return { unknown: factName(rule) };
      return { matched: compare(fact, rule.comparison) };
    }
    case 'hit':
      if (facts.sanctionsHit === undefined) return { unknown: 'the sanctions screening result' };
      return { matched: facts.sanctionsHit === rule.hit };
    case 'window': {
      const at = new Date(facts.createdAt);
      const minute = at.getUTCHours() * 60 + at.getUTCMinutes();
      const inside =
        rule.fromMinute <= rule.toMinute
          ? minute >= rule.fromMinute && minute < rule.toMinute
          : minute >= rule.fromMinute || minute < rule.toMinute;
      return { matched: inside };
    }
  }
}

function setFact(rule: CompiledRule, facts: PolicyFacts): string | undefined {
  switch (rule.ruleCheck) {
    case 'VASP':
      return facts.counterpartyDid;
    case 'JURISDICTION':
      return facts.counterpartyJurisdiction;
    case 'CUSTOMER_JURISDICTION':
      return facts.customerJurisdiction;
    case 'ASSET':
      return facts.asset;
    case 'REVIEWED_VASP_LIST':
      return facts.counterpartyReview;
    default:
      return undefined;
  }
}

function factName(rule: CompiledRule): string {
  switch (rule.ruleCheck) {
    case 'VASP':
      return "the counterparty VASP's DID";
    case 'JURISDICTION':
      return "the counterparty VASP's jurisdiction";
    case 'CUSTOMER_JURISDICTION':
      return "the counterparty customer's country";
    case 'RISK_SCORE':
      return 'a risk score';
    case 'TRANSACTION_AMOUNT':
      return 'a price for the asset';
    default:
      return rule.ruleCheck;
  }
}

/** The fact a matched rule looked at, for the reason an auditor reads. */
function describe(rule: CompiledRule, facts: PolicyFacts, currency: string): string {
  switch (rule.kind) {
    case 'all':
      return 'every transfer';
    case 'set':
      // The customer's country comes from personal data: the reason (in history and audit rows) does not repeat it.
      return rule.ruleCheck === 'CUSTOMER_JURISDICTION' ? "the customer's country" : setFact(rule, facts)!;
    case 'compare':
      return rule.ruleCheck === 'RISK_SCORE'
        ? `risk score ${facts.riskScore}`
        : `${facts.amountFiat!.toFixed(2)} ${currency}`;
    case 'hit':
      return facts.sanctionsHit ? 'a sanctions hit' : 'no sanctions hit';
    case 'window':
      return `created at ${facts.createdAt}`;
  }
}

/** The limits no rule can lift. */
function guard(facts: PolicyFacts, decision: PolicyDecision): PolicyDecision {
  const override = overrideOf(facts, decision);
  if (!override) return decision;
  return {
    ...decision,
    action: 'SEND_TO_INBOX',
    override,
    reason: `${decision.reason}; overridden: ${OVERRIDE_REASONS[override]}`,
  };
}

function overrideOf(facts: PolicyFacts, decision: PolicyDecision): DecisionOverride | undefined {
  if (facts.sanctionsHit === true && decision.action !== 'SEND_TO_INBOX') return 'sanctions-hit';
  if (decision.action !== 'APPROVE') return undefined;
  if (facts.personalDataReadable === false) return 'unreadable-personal-data';
  if (facts.counterpartyReview === 'BLOCKED') return 'blocked-counterparty';
  return undefined;
}

const OVERRIDE_REASONS: Record<DecisionOverride, string> = {
  'sanctions-hit': 'a sanctions hit is always decided by a person',
  'unreadable-personal-data': 'personal data that cannot be read is never approved automatically',
  'blocked-counterparty': 'a BLOCKED counterparty is never approved automatically',
};

function plain(rule: CompiledRule): PolicyRule {
  const { order, actionRule, ruleCheck, ruleValue, source } = rule;
  return source === undefined
    ? { order, actionRule, ruleCheck, ruleValue }
    : { order, actionRule, ruleCheck, ruleValue, source };
}
