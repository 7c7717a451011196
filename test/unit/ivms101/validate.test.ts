import Ajv from 'ajv';
import { ValidationError } from '../../../lib/errors';
import {
  assertValidBeneficiary,
  assertValidIvms101,
  assertValidOriginator,
  Ivms101,
  IVMS101_RULES,
  validateBeneficiary,
  validateIvms101,
  validateOriginator,
} from '../../../lib/ivms101';
import record from '../../fixtures/pii-sdk/ivms101-40-fields.json';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const copy = (): Json => structuredClone(record);
const originatorNatural = (r: Json) => r.originator.originatorPersons[0].naturalPerson;
const beneficiaryNatural = (r: Json) => r.beneficiary.beneficiaryPersons[0].naturalPerson;
const NAME0 = 'originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0]';

describe('validateIvms101', () => {
  it('accepts the 40-field sample record', () => {
    expect(validateIvms101(record)).toEqual([]);
    expect(() => assertValidIvms101(record)).not.toThrow();
  });

  it('names the missing field by its full path', () => {
    const r = copy();
    delete originatorNatural(r).name[0].nameIdentifier[0].primaryIdentifier;
    expect(validateIvms101(r)).toEqual([{ field: `${NAME0}.primaryIdentifier`, rule: 'is required' }]);
  });

  it.each<[string, (r: Json) => void, string, string]>([
    [
      'a wrong type',
      (r) => (originatorNatural(r).name = 'Frodo'),
      'originator.originatorPersons[0].naturalPerson.name',
      'must be an array',
    ],
    [
      'an empty string',
      (r) => (originatorNatural(r).customerIdentification = ''),
      'originator.originatorPersons[0].naturalPerson.customerIdentification',
      'must not be empty',
    ],
    [
      'an unknown code',
      (r) => (originatorNatural(r).name[0].nameIdentifier[0].nameIdentifierType = 'NICK'),
      `${NAME0}.nameIdentifierType`,
      'must be one of ALIA, BIRT, MAID, LEGL, MISC',
    ],
    [
      'a lower-case country',
      (r) => (originatorNatural(r).countryOfResidence = 'nz'),
      'originator.originatorPersons[0].naturalPerson.countryOfResidence',
      'must be an ISO 3166-1 alpha-2 country code (two capital letters)',
    ],
    [
      'a date in another format',
      (r) => (originatorNatural(r).dateAndPlaceOfBirth.dateOfBirth = '22/09/1968'),
      'originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.dateOfBirth',
      'must be a date as YYYY-MM-DD',
    ],
    [
      'an impossible date',
      (r) => (originatorNatural(r).dateAndPlaceOfBirth.dateOfBirth = '1968-02-30'),
      'originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.dateOfBirth',
      IVMS101_RULES.realDate,
    ],
    [
      'a birth in the future',
      (r) => (originatorNatural(r).dateAndPlaceOfBirth.dateOfBirth = '2999-01-01'),
      'originator.originatorPersons[0].naturalPerson.dateAndPlaceOfBirth.dateOfBirth',
      IVMS101_RULES.dateInPast,
    ],
    [
      'no persons',
      (r) => (r.beneficiary.beneficiaryPersons = []),
      'beneficiary.beneficiaryPersons',
      'must have at least 1 item',
    ],
    [
      'a national id without type',
      (r) => delete beneficiaryNatural(r).nationalIdentification.nationalIdentifierType,
      'beneficiary.beneficiaryPersons[0].naturalPerson.nationalIdentification.nationalIdentifierType',
      'is required',
    ],
    [
      'an address without country',
      (r) => delete beneficiaryNatural(r).geographicAddress[0].country,
      'beneficiary.beneficiaryPersons[0].naturalPerson.geographicAddress[0].country',
      'is required',
    ],
    [
      'a legal name without type',
      (r) => delete r.beneficiaryVASP.beneficiaryVASP.legalPerson.name.nameIdentifier[0].legalPersonNameIdentifierType,
      'beneficiaryVASP.beneficiaryVASP.legalPerson.name.nameIdentifier[0].legalPersonNameIdentifierType',
      'is required',
    ],
    [
      'a negative sequence',
      (r) =>
        (r.transferPath = { transferPath: [{ intermediaryVASP: r.originatingVASP.originatingVASP, sequence: -1 }] }),
      'transferPath.transferPath[0].sequence',
      'must be at least 0',
    ],
  ])('reports %s', (_name, change, field, rule) => {
    const r = copy();
    change(r);
    expect(validateIvms101(r)).toEqual([{ field, rule }]);
  });

  describe('unknown fields are rejected, never dropped', () => {
    it.each<[string, (r: Json) => void, string]>([
      ['at the root', (r) => (r.originatorr = {}), 'originatorr'],
      [
        'in a name (a typo)',
        (r) => (originatorNatural(r).name[0].nameIdentifier[0].primaryIdentifer = 'x'),
        `${NAME0}.primaryIdentifer`,
      ],
      ['v2-style names', (r) => (r.originator.originatorPerson = []), 'originator.originatorPerson'],
      [
        'in a person',
        (r) => (r.beneficiary.beneficiaryPersons[0].pet = 'dog'),
        'beneficiary.beneficiaryPersons[0].pet',
      ],
    ])('%s', (_name, change, field) => {
      const r = copy();
      change(r);
      expect(validateIvms101(r)).toEqual([{ field, rule: IVMS101_RULES.unknownField }]);
    });
  });

  describe('each person is exactly one of naturalPerson or legalPerson', () => {
    it('refuses both and neither, everywhere persons appear', () => {
      const r = copy();
      r.originator.originatorPersons[0].legalPerson = r.originatingVASP.originatingVASP.legalPerson;
      r.originatingVASP.originatingVASP = {};
      expect(validateIvms101(r)).toEqual([
        { field: 'originator.originatorPersons[0]', rule: IVMS101_RULES.personChoice },
        { field: 'originatingVASP.originatingVASP', rule: IVMS101_RULES.personChoice },
      ]);
    });
  });

  describe('C1 applies to natural-person originators only', () => {
    const bare = () => {
      const r = copy();
      const p = originatorNatural(r);
      for (const k of ['geographicAddress', 'customerIdentification', 'nationalIdentification', 'dateAndPlaceOfBirth'])
        delete p[k];
      return r;
    };

    it('refuses an originator with none of address, customer id, national id, date and place of birth', () => {
      expect(validateIvms101(bare())).toEqual([
        { field: 'originator.originatorPersons[0].naturalPerson', rule: IVMS101_RULES.c1 },
      ]);
      expect(() => assertValidOriginator(bare().originator)).toThrow(IVMS101_RULES.c1);
    });

    it.each(['geographicAddress', 'customerIdentification', 'nationalIdentification', 'dateAndPlaceOfBirth'])(
      'is satisfied by %s alone',
      (field) => {
        const r = bare();
        originatorNatural(r)[field] = originatorNatural(copy())[field];
        expect(validateIvms101(r)).toEqual([]);
      },
    );

    it('does not count an empty address list', () => {
      const r = bare();
      originatorNatural(r).geographicAddress = [];
      expect(validateIvms101(r)).toEqual([
        { field: 'originator.originatorPersons[0].naturalPerson', rule: IVMS101_RULES.c1 },
      ]);
    });

    it('does not apply to beneficiaries or legal persons', () => {
      const r = copy();
      const b = beneficiaryNatural(r);
      for (const k of ['geographicAddress', 'nationalIdentification']) delete b[k];
      r.originator.originatorPersons[0] = { legalPerson: r.originatingVASP.originatingVASP.legalPerson };
      expect(validateIvms101(r)).toEqual([]);
      expect(validateBeneficiary(r.beneficiary)).toEqual([]);
    });
  });

  it('never quotes a value in an issue', () => {
    const secret = 'SECRET-Baggins-1968';
    const r = copy();
    originatorNatural(r).countryOfResidence = secret;
    originatorNatural(r).dateAndPlaceOfBirth.dateOfBirth = secret;
    originatorNatural(r).name[0].nameIdentifier[0].nameIdentifierType = secret;
    originatorNatural(r).name[0].nameIdentifier[0].extra = secret;
    r.beneficiary.accountNumber = secret;
    const issues = validateIvms101(r);
    expect(issues).toHaveLength(5);
    expect(JSON.stringify(issues)).not.toContain(secret);
  });
});

describe('assert* and party validators', () => {
  it('throw a ValidationError with the first issue as field/rule and all issues in details', () => {
    const r = copy();
    delete originatorNatural(r).name[0].nameIdentifier[0].primaryIdentifier;
    r.beneficiary.extra = 1;
    let error: unknown;
    try {
      assertValidIvms101(r);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe(`${NAME0}.primaryIdentifier: is required`);
    expect((error as ValidationError).details.issues).toHaveLength(2);
  });

  it('validate originator and beneficiary alone, with paths from a root the caller chooses', () => {
    const r = copy();
    delete r.originator.originatorPersons[0].naturalPerson.name;
    expect(validateOriginator(r.originator)).toEqual([
      { field: 'originator.originatorPersons[0].naturalPerson.name', rule: 'is required' },
    ]);
    expect(validateOriginator(r.originator, 'body.originator')[0]!.field).toBe(
      'body.originator.originatorPersons[0].naturalPerson.name',
    );
    expect(validateBeneficiary({})).toEqual([{ field: 'beneficiary.beneficiaryPersons', rule: 'is required' }]);
    expect(() => assertValidBeneficiary(record.beneficiary)).not.toThrow();
    expect(validateOriginator('x')).toEqual([{ field: 'originator', rule: 'must be an object' }]);
  });
});

describe('the schema is plain JSON Schema, reusable in HTTP request schemas', () => {
  it('gives the same verdicts under Ajv (what Fastify uses)', () => {
    const strict = new Ajv({ allErrors: true, removeAdditional: false }).compile(Ivms101);
    expect(strict(record)).toBe(true);
    const r = copy();
    r.originatorr = {};
    expect(strict(r)).toBe(false);
  });

  it("is silently stripped by Fastify's default removeAdditional: true (hence: turn it off)", () => {
    const fastifyDefault = new Ajv({ removeAdditional: true }).compile(Ivms101);
    const r = copy();
    r.originatorr = { secret: 'lost' };
    expect(fastifyDefault(r)).toBe(true);
    expect(r).not.toHaveProperty('originatorr');
  });
});
