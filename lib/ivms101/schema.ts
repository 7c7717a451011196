/**
 * IVMS101 as the network's v1 API carries it: plural
 * `originatorPersons`/`beneficiaryPersons`, `naturalPerson.name` as an array, and so on. Exported for reuse in HTTP
 * request schemas and the OpenAPI document.
 *
 * Choices, and why:
 * - Unknown fields are REJECTED (`additionalProperties: false`), never kept or dropped. Personal data leaves here
 *   encrypted for a counterparty that parses strict IVMS101: a misspelt key (`primaryIdentifer`) kept would travel
 *   unread, and dropped would lose data silently; rejected, the caller sees the field path at once. NOTE for HTTP use:
 *   Fastify's default Ajv options include `removeAdditional: true`, which strips such keys before validation; set
 *   `ajv.customOptions.removeAdditional = false` so they are reported instead.
 * - Required fields follow IVMS101's multiplicities for the elements that identify someone (a name's
 *   primaryIdentifier and type, a legal name and its type, an address's type and country, both parts of a national
 *   identification and of date and place of birth). `townName` stays optional: addresses given only as `addressLine`
 *   are common and the network accepts them.
 * - Rules JSON Schema cannot say clearly (exactly one of naturalPerson/legalPerson, the originator-only constraint
 *   C1, real calendar dates) live in validate.ts, which also turns schema errors into field paths.
 */
import { Type, type Static } from 'typebox';
import { FreeText } from '../text';

export const COUNTRY_CODE_PATTERN = '^[A-Z]{2}$';
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/** IVMS101's MaxNText types (free text of 1 to N characters), under the one free-text rule (lib/text.ts). */
const MaxText = (maxLength: number) => FreeText({ minLength: 1, maxLength });
const Max16Text = MaxText(16);
const Max35Text = MaxText(35);
const Max50Text = MaxText(50);
const Max70Text = MaxText(70);
const Max100Text = MaxText(100);
/**
 * IVMS101 leaves most multiplicities unbounded; these bounds keep a request within the network's personal-data limits
 * (at most 5,000 items per `/pii/put`) with room to spare, far above any real person's record.
 */
const MANY = { maxItems: 20 } as const;
const CountryCode = Type.String({
  pattern: COUNTRY_CODE_PATTERN,
  description: 'ISO 3166-1 alpha-2 country code; XX for unknown',
});
const IsoDate = Type.String({ pattern: DATE_PATTERN, description: 'Calendar date, YYYY-MM-DD' });
const closed = { additionalProperties: false } as const;

export const NaturalPersonNameTypeCode = Type.Enum(['ALIA', 'BIRT', 'MAID', 'LEGL', 'MISC']);
export const LegalPersonNameTypeCode = Type.Enum(['LEGL', 'SHRT', 'TRAD']);
export const AddressTypeCode = Type.Enum(['HOME', 'BIZZ', 'GEOG']);
export const NationalIdentifierTypeCode = Type.Enum([
  'ARNU',
  'CCPT',
  'RAID',
  'DRLC',
  'FIIN',
  'TXID',
  'SOCS',
  'IDCD',
  'LEIX',
  'MISC',
]);
export const TransliterationMethodCode = Type.Enum([
  'arab',
  'aran',
  'armn',
  'cyrl',
  'deva',
  'geor',
  'grek',
  'hani',
  'hebr',
  'kana',
  'kore',
  'thai',
  'othr',
]);

export const NaturalPersonNameId = Type.Object(
  {
    primaryIdentifier: Max100Text,
    secondaryIdentifier: Type.Optional(Max100Text),
    nameIdentifierType: NaturalPersonNameTypeCode,
  },
  closed,
);

export const NaturalPersonName = Type.Object(
  {
    nameIdentifier: Type.Array(NaturalPersonNameId, { minItems: 1, ...MANY }),
    localNameIdentifier: Type.Optional(Type.Array(NaturalPersonNameId, MANY)),
    phoneticNameIdentifier: Type.Optional(Type.Array(NaturalPersonNameId, MANY)),
  },
  closed,
);

export const Address = Type.Object(
  {
    addressType: AddressTypeCode,
    department: Type.Optional(Max50Text),
    subDepartment: Type.Optional(Max70Text),
    streetName: Type.Optional(Max70Text),
    buildingNumber: Type.Optional(Max16Text),
    buildingName: Type.Optional(Max35Text),
    floor: Type.Optional(Max70Text),
    postBox: Type.Optional(Max16Text),
    room: Type.Optional(Max70Text),
    postCode: Type.Optional(Max16Text),
    townName: Type.Optional(Max35Text),
    townLocationName: Type.Optional(Max35Text),
    districtName: Type.Optional(Max35Text),
    countrySubDivision: Type.Optional(Max35Text),
    addressLine: Type.Optional(Type.Array(Max70Text, { maxItems: 7 })),
    country: CountryCode,
  },
  closed,
);

export const NationalIdentification = Type.Object(
  {
    nationalIdentifier: Max35Text,
    nationalIdentifierType: NationalIdentifierTypeCode,
    countryOfIssue: Type.Optional(CountryCode),
    registrationAuthority: Type.Optional(Max35Text),
  },
  closed,
);

export const DateAndPlaceOfBirth = Type.Object({ dateOfBirth: IsoDate, placeOfBirth: Max70Text }, closed);

export const NaturalPerson = Type.Object(
  {
    name: Type.Array(NaturalPersonName, { minItems: 1, ...MANY }),
    geographicAddress: Type.Optional(Type.Array(Address, MANY)),
    nationalIdentification: Type.Optional(NationalIdentification),
    customerIdentification: Type.Optional(Max50Text),
    dateAndPlaceOfBirth: Type.Optional(DateAndPlaceOfBirth),
    countryOfResidence: Type.Optional(CountryCode),
  },
  closed,
);

export const LegalPersonNameId = Type.Object(
  { legalPersonName: Max100Text, legalPersonNameIdentifierType: LegalPersonNameTypeCode },
  closed,
);

export const LegalPersonName = Type.Object(
  {
    nameIdentifier: Type.Array(LegalPersonNameId, { minItems: 1, ...MANY }),
    localNameIdentifier: Type.Optional(Type.Array(LegalPersonNameId, MANY)),
    phoneticNameIdentifier: Type.Optional(Type.Array(LegalPersonNameId, MANY)),
  },
  closed,
);

export const LegalPerson = Type.Object(
  {
    name: LegalPersonName,
    geographicAddress: Type.Optional(Type.Array(Address, MANY)),
    customerNumber: Type.Optional(Max50Text),
    nationalIdentification: Type.Optional(NationalIdentification),
    dateOfRegistration: Type.Optional(IsoDate),
    countryOfRegistration: Type.Optional(CountryCode),
  },
  closed,
);

/** Exactly one of the two is allowed; validate.ts enforces it. */
export const Person = Type.Object(
  { naturalPerson: Type.Optional(NaturalPerson), legalPerson: Type.Optional(LegalPerson) },
  { ...closed, description: 'Exactly one of naturalPerson or legalPerson' },
);

export const Originator = Type.Object(
  {
    originatorPersons: Type.Array(Person, { minItems: 1, ...MANY }),
    accountNumber: Type.Optional(Type.Array(Max100Text, MANY)),
  },
  {
    ...closed,
    description:
      'A natural-person originator also needs geographicAddress, customerIdentification, nationalIdentification or ' +
      'dateAndPlaceOfBirth (IVMS101 constraint C1)',
  },
);

export const Beneficiary = Type.Object(
  {
    beneficiaryPersons: Type.Array(Person, { minItems: 1, ...MANY }),
    accountNumber: Type.Optional(Type.Array(Max100Text, MANY)),
  },
  closed,
);

export const OriginatingVasp = Type.Object({ originatingVASP: Person }, closed);
export const BeneficiaryVasp = Type.Object({ beneficiaryVASP: Person }, closed);
export const IntermediaryVasp = Type.Object(
  { intermediaryVASP: Person, sequence: Type.Integer({ minimum: 0 }) },
  closed,
);
export const TransferPath = Type.Object({ transferPath: Type.Array(IntermediaryVasp, MANY) }, closed);
export const PayloadMetadata = Type.Object(
  { transliterationMethod: Type.Optional(Type.Array(TransliterationMethodCode, MANY)) },
  closed,
);

export const Ivms101 = Type.Object(
  {
    originator: Type.Optional(Originator),
    beneficiary: Type.Optional(Beneficiary),
    originatingVASP: Type.Optional(OriginatingVasp),
    beneficiaryVASP: Type.Optional(BeneficiaryVasp),
    transferPath: Type.Optional(TransferPath),
    payloadMetadata: Type.Optional(PayloadMetadata),
  },
  closed,
);

export type Ivms101 = Static<typeof Ivms101>;
export type Originator = Static<typeof Originator>;
export type Beneficiary = Static<typeof Beneficiary>;
export type Person = Static<typeof Person>;
export type NaturalPerson = Static<typeof NaturalPerson>;
export type LegalPerson = Static<typeof LegalPerson>;
export type Address = Static<typeof Address>;
export type NationalIdentification = Static<typeof NationalIdentification>;
