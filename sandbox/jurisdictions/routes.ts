/**
 * Jurisdictions and pre-flight validation on the network's API, with the table of data/jurisdictions.json:
 *
 * | method | path | input | answer |
 * |---|---|---|---|
 * | GET | `/jurisdictions?countryCode=&fallbackToFATF=&division=` (token optional) | | JurisdictionList; a country without rules: `[]`, or FATF's entry (`countryCode: "FATF"`) with `fallbackToFATF=true` |
 * | POST | `/tx/validate` (deprecated) | TransactionValidateRequest | TransactionValidationResult, `errors` from TransactionValidateErrors |
 * | POST | `/tx/validate/full` | TransactionValidateFullRequest (+ `customAssetPrice`, `transactionAssetDecimals`) | TransactionFullValidationResult |
 *
 * Both validations answer 400 NotabeneTransactionValidationError naming the field for a malformed body,
 * TrustFrameworkVASPNotFoundError for an originator VASP not in the directory, UserDIDNotAdminforVASPError for one the
 * caller may not act for. Nothing is stored.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Access } from '../auth/access';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { vaspExists } from '../directory/store';
import { badRequest, notAdmin } from '../errors';
import { Did, documented } from '../openapi';
import { OwnershipProofSchema } from '../transactions/proofs';
import { classify, issueText, present } from './classify';
import { parseJurisdictionQuery, parseValidateFullRequest, parseValidateRequest } from './requests';
import { rulesOf, rulesTable, type Rules } from './table';

const Text = Type.String({ maxLength: 1024 });
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Amount = Type.String({
  pattern: '^0*[1-9][0-9]*$',
  maxLength: 80,
  description: 'Base units, a whole number > 0',
});
const Obj = Type.Object({}, { additionalProperties: true });
const Asset = Type.Union([
  Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }),
  Type.Object({ caip19: Type.String({ minLength: 1 }) }),
  Type.Object({ coingeckoId: Type.String({ minLength: 1 }), network: Type.String({ minLength: 1 }) }),
]);
const CustomAssetPrice = Type.Object({
  priceUSD: Type.Number({ minimum: 0 }),
  decimals: Type.Integer({ minimum: 0, maximum: 255 }),
});

const ValidateBody = Type.Object({
  transactionAsset: Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }),
  destination: Type.String({ minLength: 1, maxLength: 1024 }),
  transactionAmount: Amount,
  originatorVASPdid: Did,
  originatorEqualsBeneficiary: Type.Boolean(),
  beneficiaryVASPdid: Optional(Did),
  beneficiaryVASPname: Optional(Text),
  beneficiaryName: Optional(Text),
  beneficiaryAccountNumber: Optional(Text),
  beneficiaryAddress: Optional(Obj),
  beneficiaryProof: Optional(OwnershipProofSchema),
  travelRuleBehavior: Optional(Type.Boolean()),
  network: Optional(Text),
});

const ValidateFullBody = Type.Object({
  transactionAsset: Asset,
  transactionAmount: Amount,
  transactionAssetDecimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })),
  customAssetPrice: Optional(CustomAssetPrice),
  transactionBlockchainInfo: Type.Object({
    txHash: Optional(Text),
    origin: Optional(Text),
    destination: Type.String({ minLength: 1, maxLength: 1024 }),
  }),
  originatorDid: Optional(Did),
  beneficiaryDid: Optional(Did),
  originatorVASPdid: Optional(Did),
  beneficiaryVASPdid: Optional(Did),
  beneficiaryVASPname: Optional(Text),
  originator: Optional(Obj),
  beneficiary: Optional(Obj),
  pii: Optional(Obj),
  encrypted: Optional(Type.String({ maxLength: 4 * 1024 * 1024 })),
  protocol: Optional(Type.Union([Type.Literal('TRLight'), Type.Literal('TRP'), Type.Literal('OpenVASP')])),
  notificationEmail: Optional(Text),
  skipBeneficiaryDataValidation: Optional(Type.Boolean()),
  travelRuleBehavior: Optional(Type.Boolean()),
  originatorProof: Optional(OwnershipProofSchema),
  beneficiaryProof: Optional(OwnershipProofSchema),
  network: Optional(Text),
  validatePartyFields: Optional(
    Type.Union([Type.Literal('BENEFICIARY'), Type.Literal('ORIGINATOR'), Type.Literal('ALL')]),
  ),
  onBehalfOfMyself: Optional(Type.Boolean()),
});

const JurisdictionQuery = Type.Object({
  countryCode: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' })),
  fallbackToFATF: Type.Optional(Type.Boolean()),
  division: Type.Optional(Type.String({ maxLength: 64 })),
});

/** The originator VASP is in the directory and the caller may act for it. */
async function requireOriginator(ctx: SandboxContext, access: Access, did: string): Promise<void> {
  if (!(await vaspExists(ctx.pool, did)))
    throw badRequest('TrustFrameworkVASPNotFoundError', `originatorVASPdid: no VASP found with vaspDID ${did}`);
  if (!access.vasps().includes(did))
    throw notAdmin(`User ${access.userDid} is not allowed to validate transactions for VASP ${did}`);
}

const field = (f: string) => ({ field: f });

/** A jurisdiction's rules as the network lists them: a Threshold per amount at which the required fields change. */
export function jurisdictionEntry(rules: Rules, countryCode = rules.countryCode) {
  const thresholds = new Map<number, { type: string; fields: { field: string }[]; conditions?: unknown[] }[]>();
  const add = (at: number, rule: { type: string; fields: { field: string }[]; conditions?: unknown[] }) =>
    thresholds.set(at, [...(thresholds.get(at) ?? []), rule]);
  if (rules.threshold > 0) add(0, { type: 'REQUIRED_FIELDS', fields: rules.fieldsBelowThreshold.map(field) });
  add(rules.threshold, { type: 'REQUIRED_FIELDS', fields: rules.fieldsAboveThreshold.map(field) });
  const proof = rules.selfHostedProof;
  if (proof.required)
    add(proof.aboveAmount ?? 0, {
      type: 'OWNERSHIP_PROOF',
      fields: [field('beneficiaryProof')],
      conditions: [{ type: 'BENEFICIARY_ADDRESS_UNHOSTED' }],
    });
  return {
    countryCode,
    currency: rules.currency,
    thresholds: [...thresholds.entries()].sort(([a], [b]) => a - b).map(([threshold, r]) => ({ threshold, rules: r })),
    name: rules.name,
    source: rules.source,
    confidence: rules.confidence,
  };
}

/** `GET /jurisdictions`: the network documents it with a token or without one. */
export function jurisdictionPublicRoutes(app: FastifyInstance): void {
  app.get('/jurisdictions', documented({ querystring: JurisdictionQuery }), async (request) => {
    const q = parseJurisdictionQuery(request.query as Record<string, unknown>);
    if (q.countryCode === undefined)
      return rulesTable().jurisdictions.flatMap((j) =>
        j.countryCodes ? j.countryCodes.map((c) => jurisdictionEntry(j, c)) : [jurisdictionEntry(j)],
      );
    const rules = rulesOf(q.countryCode);
    if (rules) return [jurisdictionEntry(rules, q.countryCode)];
    return q.fallbackToFATF ? [jurisdictionEntry(rulesTable().fatf)] : [];
  });
}

const FLAGS: Record<string, string> = {
  'beneficiary.beneficiaryPersons[0].naturalPerson.name': 'beneficiaryNameMissing',
  'beneficiary.accountNumber': 'beneficiaryAccountNumberMissing',
  'beneficiary.beneficiaryPersons[0].naturalPerson.geographicAddress': 'beneficiaryAddressMissing',
  beneficiaryProof: 'beneficiaryOwnershipProofMissing',
};

/** `POST /tx/validate` and `POST /tx/validate/full`, behind the bearer guard as the other /tx routes. */
export function validationRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  api.post(
    '/tx/validate',
    documented({ body: ValidateBody, description: 'Deprecated by the network' }),
    async (request) => {
      const req = parseValidateRequest(request.body);
      await requireOriginator(ctx, accessOf(request), req.originatorVASPdid);
      // The deprecated request carries the beneficiary's data as flags; an originator who is the beneficiary is known.
      const paths: string[] = [];
      if (req.beneficiaryName || req.originatorEqualsBeneficiary)
        paths.push('beneficiary.beneficiaryPersons[0].naturalPerson.name');
      if (req.beneficiaryAccountNumber) paths.push('beneficiary.accountNumber');
      if (req.hasBeneficiaryAddress || req.originatorEqualsBeneficiary)
        paths.push('beneficiary.beneficiaryPersons[0].naturalPerson.geographicAddress');
      const c = await classify(ctx.pool, {
        originatorVASPdid: req.originatorVASPdid,
        beneficiaryVASPdid: req.beneficiaryVASPdid,
        beneficiaryVASPname: req.beneficiaryVASPname,
        asset: req.assetText,
        amount: req.transactionAmount,
        destination: req.destination,
        present: paths,
        hasBeneficiaryProof: req.hasBeneficiaryProof,
        travelRuleBehavior: req.travelRuleBehavior,
        party: 'BENEFICIARY',
      });
      const errors = [...new Set(c.errors.map((e) => FLAGS[e.field ?? '']).filter((e): e is string => !!e))];
      return {
        isValid: c.type !== 'UNKNOWN' && c.errors.length === 0,
        type: c.type,
        beneficiaryAddressType: c.beneficiaryAddressType,
        addressSource: c.addressSource,
        ...(c.beneficiaryVASPname !== undefined && { beneficiaryVASPname: c.beneficiaryVASPname }),
        ...(c.beneficiaryVASPdid !== undefined && { beneficiaryVASPdid: c.beneficiaryVASPdid }),
        errors,
      };
    },
  );

  api.post('/tx/validate/full', documented({ body: ValidateFullBody }), async (request) => {
    const req = parseValidateFullRequest(request.body);
    if (req.originatorVASPdid) await requireOriginator(ctx, accessOf(request), req.originatorVASPdid);
    const c = await classify(ctx.pool, {
      originatorVASPdid: req.originatorVASPdid ?? '',
      beneficiaryVASPdid: req.beneficiaryVASPdid,
      beneficiaryVASPname: req.beneficiaryVASPname,
      asset: req.assetText,
      amount: req.transactionAmount,
      decimals: req.transactionAssetDecimals,
      customAssetPrice: req.customAssetPrice,
      destination: req.destination,
      present: present(req),
      hasBeneficiaryProof: req.hasBeneficiaryProof,
      travelRuleBehavior: req.travelRuleBehavior,
      party: req.validatePartyFields,
    });
    return {
      isValid: c.type !== 'UNKNOWN' && c.errors.length === 0,
      type: c.type,
      beneficiaryAddressType: c.beneficiaryAddressType,
      addressSource: c.addressSource,
      ...(c.beneficiaryVASPname !== undefined && { beneficiaryVASPname: c.beneficiaryVASPname }),
      errors: c.errors.map(issueText),
      warnings: c.warnings.map(issueText),
    };
  });
}
