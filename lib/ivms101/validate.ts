/**
 * IVMS101 validation that names what to fix: every issue is a field path in the same format as the network's
 * flattened keys (`originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier`) and a
 * rule in words. Rules never quote the offending value: it is personal data.
 */
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { ValidationError } from '../errors';
import { FREE_TEXT_PATTERN, FREE_TEXT_RULE } from '../text';
import {
  Beneficiary,
  COUNTRY_CODE_PATTERN,
  DATE_PATTERN,
  Ivms101,
  Originator,
  type Beneficiary as BeneficiaryT,
  type Ivms101 as Ivms101T,
  type Originator as OriginatorT,
} from './schema';
import { isObject } from '../is-object';

export interface Ivms101Issue {
  field: string;
  rule: string;
}

const checkIvms101 = Compile(Ivms101);
const checkOriginator = Compile(Originator);
const checkBeneficiary = Compile(Beneficiary);

export const IVMS101_RULES = {
  required: 'is required',
  unknownField: 'is not an IVMS101 field (unknown fields are rejected, not dropped)',
  personChoice: 'must have exactly one of naturalPerson or legalPerson',
  c1:
    'a natural-person originator needs geographicAddress, customerIdentification, nationalIdentification or ' +
    'dateAndPlaceOfBirth (IVMS101 C1)',
  realDate: 'must be a real calendar date',
  dateInPast: 'must not be in the future (IVMS101 C2)',
} as const;

/** Issues of a whole IVMS101 record (`originator`, `beneficiary`, `originatingVASP`, …), paths from its root. */
export function validateIvms101(value: unknown): Ivms101Issue[] {
  const issues = schemaIssues(checkIvms101.Errors(value), '');
  if (isObject(value)) {
    if (isObject(value.originator))
      issues.push(...partyRuleIssues(value.originator, 'originator', 'originatorPersons'));
    if (isObject(value.beneficiary)) {
      issues.push(...partyRuleIssues(value.beneficiary, 'beneficiary', 'beneficiaryPersons'));
    }
    issues.push(...vaspRuleIssues(value));
  }
  return dedupe(issues);
}

/** Issues of an IVMS101 Originator; paths start at `root`. Applies C1. */
export function validateOriginator(value: unknown, root = 'originator'): Ivms101Issue[] {
  const issues = schemaIssues(checkOriginator.Errors(value), root);
  if (isObject(value)) issues.push(...partyRuleIssues(value, root, 'originatorPersons'));
  return dedupe(issues);
}

/** Issues of an IVMS101 Beneficiary; paths start at `root`. C1 does not apply to beneficiaries. */
export function validateBeneficiary(value: unknown, root = 'beneficiary'): Ivms101Issue[] {
  const issues = schemaIssues(checkBeneficiary.Errors(value), root);
  if (isObject(value)) issues.push(...partyRuleIssues(value, root, 'beneficiaryPersons'));
  return dedupe(issues);
}

export function assertValidIvms101(value: unknown): asserts value is Ivms101T {
  throwFirst(validateIvms101(value));
}

export function assertValidOriginator(value: unknown, root = 'originator'): asserts value is OriginatorT {
  throwFirst(validateOriginator(value, root));
}

export function assertValidBeneficiary(value: unknown, root = 'beneficiary'): asserts value is BeneficiaryT {
  throwFirst(validateBeneficiary(value, root));
}

/** The first issue becomes the error's field and rule; all of them travel in `details.issues`. */
function throwFirst(issues: Ivms101Issue[]): void {
  const [first] = issues;
  if (first) throw new ValidationError(first.field, first.rule, { issues });
}

function schemaIssues(errors: TLocalizedValidationError[], root: string): Ivms101Issue[] {
  const issues: Ivms101Issue[] = [];
  for (const error of errors) {
    const at = fieldPath(error.instancePath, root);
    switch (error.keyword) {
      case 'required':
        for (const name of error.params.requiredProperties)
          issues.push({ field: join(at, name), rule: IVMS101_RULES.required });
        break;
      case 'additionalProperties':
        for (const name of error.params.additionalProperties) {
          issues.push({ field: join(at, name), rule: IVMS101_RULES.unknownField });
        }
        break;
      case 'boolean':
        // The per-key echo of additionalProperties: false; the additionalProperties error already names the key.
        if (error.schemaPath.endsWith('/additionalProperties')) break;
        issues.push({ field: at || '(root)', rule: error.message });
        break;
      default:
        issues.push({ field: at || '(root)', rule: ruleOf(error) });
    }
  }
  return issues;
}

function ruleOf(error: TLocalizedValidationError): string {
  switch (error.keyword) {
    case 'type':
      return `must be ${article(String((error.params as { type: unknown }).type))}`;
    case 'minLength':
      return 'must not be empty';
    case 'pattern':
      if (error.params.pattern === COUNTRY_CODE_PATTERN) {
        return 'must be an ISO 3166-1 alpha-2 country code (two capital letters)';
      }
      if (error.params.pattern === DATE_PATTERN) return 'must be a date as YYYY-MM-DD';
      if (error.params.pattern === FREE_TEXT_PATTERN) return FREE_TEXT_RULE;
      return `must match ${error.params.pattern}`;
    case 'enum':
      return `must be one of ${error.params.allowedValues.join(', ')}`;
    case 'minItems':
      return `must have at least ${error.params.limit} item${error.params.limit === 1 ? '' : 's'}`;
    case 'maxLength':
      return `must have at most ${error.params.limit} characters`;
    case 'maxItems':
      return `must have at most ${error.params.limit} items`;
    case 'minimum':
      return `must be at least ${error.params.limit}`;
    default:
      return error.message;
  }
}

/** Originator/Beneficiary rules beyond the schema: one kind of person each, C1 for originators, real dates. */
function partyRuleIssues(party: Record<string, unknown>, root: string, personsKey: string): Ivms101Issue[] {
  const issues: Ivms101Issue[] = [];
  const persons = party[personsKey];
  if (!Array.isArray(persons)) return issues;
  persons.forEach((person, i) => {
    const at = `${root}.${personsKey}[${i}]`;
    issues.push(...personRuleIssues(person, at));
    if (personsKey === 'originatorPersons' && isObject(person) && isObject(person.naturalPerson)) {
      const natural = person.naturalPerson;
      const identified =
        (Array.isArray(natural.geographicAddress) && natural.geographicAddress.length > 0) ||
        natural.customerIdentification !== undefined ||
        natural.nationalIdentification !== undefined ||
        natural.dateAndPlaceOfBirth !== undefined;
      if (!identified) issues.push({ field: `${at}.naturalPerson`, rule: IVMS101_RULES.c1 });
    }
  });
  return issues;
}

function vaspRuleIssues(record: Record<string, unknown>): Ivms101Issue[] {
  const issues: Ivms101Issue[] = [];
  if (isObject(record.originatingVASP)) {
    issues.push(...personRuleIssues(record.originatingVASP.originatingVASP, 'originatingVASP.originatingVASP'));
  }
  if (isObject(record.beneficiaryVASP)) {
    issues.push(...personRuleIssues(record.beneficiaryVASP.beneficiaryVASP, 'beneficiaryVASP.beneficiaryVASP'));
  }
  if (isObject(record.transferPath) && Array.isArray(record.transferPath.transferPath)) {
    record.transferPath.transferPath.forEach((hop, i) => {
      if (isObject(hop)) {
        issues.push(...personRuleIssues(hop.intermediaryVASP, `transferPath.transferPath[${i}].intermediaryVASP`));
      }
    });
  }
  return issues;
}

function personRuleIssues(person: unknown, at: string): Ivms101Issue[] {
  if (!isObject(person)) return [];
  const issues: Ivms101Issue[] = [];
  if ((person.naturalPerson === undefined) === (person.legalPerson === undefined)) {
    issues.push({ field: at, rule: IVMS101_RULES.personChoice });
  }
  const natural = person.naturalPerson;
  if (isObject(natural) && isObject(natural.dateAndPlaceOfBirth)) {
    const field = `${at}.naturalPerson.dateAndPlaceOfBirth.dateOfBirth`;
    issues.push(...dateIssues(natural.dateAndPlaceOfBirth.dateOfBirth, field, true));
  }
  const legal = person.legalPerson;
  if (isObject(legal))
    issues.push(...dateIssues(legal.dateOfRegistration, `${at}.legalPerson.dateOfRegistration`, false));
  return issues;
}

/** The schema checks the YYYY-MM-DD shape; this catches 2023-02-30 and, for births, dates in the future. */
function dateIssues(value: unknown, field: string, mustBePast: boolean): Ivms101Issue[] {
  if (typeof value !== 'string' || !new RegExp(DATE_PATTERN).test(value)) return [];
  const date = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value)
    return [{ field, rule: IVMS101_RULES.realDate }];
  if (mustBePast && date.getTime() > Date.now()) return [{ field, rule: IVMS101_RULES.dateInPast }];
  return [];
}

/** `/originator/originatorPersons/0/naturalPerson` → `originator.originatorPersons[0].naturalPerson` */
function fieldPath(instancePath: string, root = ''): string {
  let out = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^(0|[1-9][0-9]*)$/.test(part) ? `${out}[${part}]` : join(out, part);
  }
  return out;
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function dedupe(issues: Ivms101Issue[]): Ivms101Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.field}\u0000${issue.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
