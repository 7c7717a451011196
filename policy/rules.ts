/**
 * A rule's value, parsed once: what the API validates (each problem names the field and the rule) and what the
 * evaluator runs (sets and comparisons, so a check costs a lookup, not a string split).
 */
import { isCountryCode } from '../lib/countries';
import { REVIEW_VALUES, UNREVIEWED } from '../counterparties/types';
import { ACTION_RULES, RULE_CHECKS, type PolicyRule, type RuleCheck } from './types';

export const MAX_RULES_PER_DIRECTION = 1000;
export const MAX_RULE_VALUE_LENGTH = 100_000;
const DID = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;
const ASSET = /^[A-Za-z0-9._-]{1,32}$/;
const COMPARISON = /^(<=|>=|<|>|=)\s*(-?\d+(?:\.\d+)?)$/;
const WINDOW = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;
const REVIEWED = new Set<string>([...REVIEW_VALUES, UNREVIEWED]);

export type Comparison = { op: '<' | '<=' | '>' | '>=' | '='; value: number };

/** A rule ready to evaluate: its value in the form its check needs. */
export type CompiledRule = PolicyRule &
  (
    | { kind: 'all' }
    | { kind: 'set'; values: ReadonlySet<string> }
    | { kind: 'compare'; comparison: Comparison }
    | { kind: 'hit'; hit: boolean }
    | { kind: 'window'; fromMinute: number; toMinute: number }
  );

export interface RuleProblem {
  field: string;
  rule: string;
}

/** Problems with a direction's rules (`path` is where they sit in the request, e.g. `incoming`). */
export function ruleListProblems(rules: unknown, path: string): RuleProblem[] {
  if (!Array.isArray(rules)) return [{ field: path, rule: 'must be an array of rules' }];
  if (rules.length > MAX_RULES_PER_DIRECTION)
    return [{ field: path, rule: `at most ${MAX_RULES_PER_DIRECTION} rules per direction` }];
  const problems: RuleProblem[] = [];
  const orders = new Set<number>();
  rules.forEach((rule: Partial<PolicyRule>, i) => {
    const at = `${path}[${i}]`;
    if (!Number.isInteger(rule.order) || rule.order! < 0 || rule.order! > 1_000_000)
      problems.push({ field: `${at}.order`, rule: 'must be an integer from 0 to 1000000' });
    else if (orders.has(rule.order!))
      problems.push({ field: `${at}.order`, rule: `must be unique in ${path}: ${rule.order} is used twice` });
    else orders.add(rule.order!);
    if (!ACTION_RULES.includes(rule.actionRule as never))
      problems.push({ field: `${at}.actionRule`, rule: `must be one of ${ACTION_RULES.join(', ')}` });
    if (!RULE_CHECKS.includes(rule.ruleCheck as never))
      problems.push({ field: `${at}.ruleCheck`, rule: `must be one of ${RULE_CHECKS.join(', ')}` });
    else {
      const problem = valueProblem(rule.ruleCheck!, rule.ruleValue);
      if (problem) problems.push({ field: `${at}.ruleValue`, rule: problem });
    }
  });
  return problems;
}

/** What is wrong with a value for its check, if anything. */
export function valueProblem(check: RuleCheck, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_RULE_VALUE_LENGTH) return `must be at most ${MAX_RULE_VALUE_LENGTH} characters`;
  switch (check) {
    case 'ALL':
      return value === '' || value === 'ALL' ? undefined : 'must be "" or "ALL" for ALL';
    case 'VASP':
      return listProblem(value, (v) => DID.test(v), 'a DID (did:method:id)');
    case 'JURISDICTION':
    case 'CUSTOMER_JURISDICTION':
      return listProblem(value, isCountryCode, 'an ISO 3166-1 alpha-2 country code');
    case 'ASSET':
      return listProblem(value, (v) => ASSET.test(v), 'an asset symbol (letters, digits, . _ -; up to 32)');
    case 'REVIEWED_VASP_LIST':
      return listProblem(value, (v) => REVIEWED.has(v), `one of ${[...REVIEWED].join(', ')}`);
    case 'RISK_SCORE':
    case 'TRANSACTION_AMOUNT': {
      const comparison = parseComparison(value);
      if (!comparison) return 'must be a comparison and a number, e.g. ">=1000" (<, <=, >, >=, =)';
      if (check === 'RISK_SCORE' && (comparison.value < 0 || comparison.value > 100))
        return 'a risk score is from 0 to 100';
      return undefined;
    }
    case 'SANCTION_LIST_CHECK':
      return value === 'HIT' || value === 'NO_HIT' ? undefined : 'must be HIT or NO_HIT';
    case 'TRANSACTION_CREATION_TIME':
      return WINDOW.test(value) ? undefined : 'must be a UTC window HH:MM-HH:MM, e.g. "22:00-06:00"';
  }
}

function listProblem(value: string, valid: (v: string) => boolean, what: string): string | undefined {
  const items = splitList(value);
  if (items.length === 0) return `must list at least one ${what}, comma-separated`;
  const bad = items.find((v) => !valid(v));
  return bad === undefined ? undefined : `each comma-separated item must be ${what}; "${bad.slice(0, 80)}" is not`;
}

const splitList = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

function parseComparison(value: string): Comparison | undefined {
  const m = COMPARISON.exec(value.trim());
  return m ? { op: m[1] as Comparison['op'], value: Number(m[2]) } : undefined;
}

/** Rules in evaluation order (ascending `order`), values parsed. The rules must have passed ruleListProblems. */
export function compileRules(rules: readonly PolicyRule[]): CompiledRule[] {
  return [...rules].sort((a, b) => a.order - b.order).map(compileRule);
}

function compileRule(rule: PolicyRule): CompiledRule {
  switch (rule.ruleCheck) {
    case 'ALL':
      return { ...rule, kind: 'all' };
    case 'VASP':
    case 'JURISDICTION':
    case 'CUSTOMER_JURISDICTION':
    case 'ASSET':
    case 'REVIEWED_VASP_LIST':
      return { ...rule, kind: 'set', values: new Set(splitList(rule.ruleValue)) };
    case 'RISK_SCORE':
    case 'TRANSACTION_AMOUNT':
      return { ...rule, kind: 'compare', comparison: parseComparison(rule.ruleValue)! };
    case 'SANCTION_LIST_CHECK':
      return { ...rule, kind: 'hit', hit: rule.ruleValue === 'HIT' };
    case 'TRANSACTION_CREATION_TIME': {
      const [, fromH, fromM, toH, toM] = WINDOW.exec(rule.ruleValue)!.map(Number);
      return { ...rule, kind: 'window', fromMinute: fromH! * 60 + fromM!, toMinute: toH! * 60 + toM! };
    }
  }
}

export function compare(actual: number, { op, value }: Comparison): boolean {
  switch (op) {
    case '<':
      return actual < value;
    case '<=':
      return actual <= value;
    case '>':
      return actual > value;
    case '>=':
      return actual >= value;
    case '=':
      return actual === value;
  }
}
