import type { TSchema, Static } from 'typebox';
import { Value } from 'typebox/value';
import { ValidationError } from './errors';
import { FREE_TEXT_PATTERN, FREE_TEXT_RULE } from './text';

/** `/originator/originatorPersons/0/naturalPerson` → `originator.originatorPersons[0].naturalPerson` */
export function toFieldPath(instancePath: string, root = ''): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = root;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || root || '(body)';
}

interface SchemaIssue {
  instancePath: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

export const UNKNOWN_FIELD_RULE = 'is not a field of this request';

/** Names the missing (or unknown) property itself rather than its parent, which is what a caller needs to fix the input. */
export function issueToValidationError(issue: SchemaIssue, root = ''): ValidationError {
  const missing =
    issue.keyword === 'required' ? (issue.params?.requiredProperties ?? issue.params?.missingProperty) : undefined;
  if (missing !== undefined) {
    const name = Array.isArray(missing) ? String(missing[0]) : String(missing);
    return new ValidationError(toFieldPath(`${issue.instancePath}/${name}`, root), 'is required');
  }
  const extra = issue.keyword === 'additionalProperties' ? issue.params?.additionalProperty : undefined;
  if (extra !== undefined)
    return new ValidationError(toFieldPath(`${issue.instancePath}/${String(extra)}`, root), UNKNOWN_FIELD_RULE);
  return new ValidationError(toFieldPath(issue.instancePath, root), ruleOf(issue));
}

/** The rule in words: the free-text pattern is spelt out rather than quoted as a regular expression. */
function ruleOf(issue: SchemaIssue): string {
  if (issue.keyword === 'pattern' && issue.params?.pattern === FREE_TEXT_PATTERN) return FREE_TEXT_RULE;
  return issue.message ?? 'is invalid';
}

/** Checks `value` against a TypeBox schema and throws a ValidationError naming the first failing field and rule. */
export function assertValid<T extends TSchema>(schema: T, value: unknown, root = ''): asserts value is Static<T> {
  for (const issue of Value.Errors(schema, value)) throw issueToValidationError(issue, root);
}
