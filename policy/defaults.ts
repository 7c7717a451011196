/**
 * The decision when no policy is configured for a VASP or the group: approve unless screening found a hit (the guard
 * in evaluate.ts sends a hit to a person), as the system decided before policies existed.
 */
import { compileRules } from './rules';
import type { CompiledPolicy } from './evaluate';
import type { Direction } from './types';

export const DEFAULT_CURRENCY = 'USD';

const approveAll = compileRules([{ order: 1, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' }]);

export function defaultPolicy(_direction: Direction): CompiledPolicy {
  return { ref: null, currency: DEFAULT_CURRENCY, rules: approveAll };
}
