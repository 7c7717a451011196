/**
 * The network's rules engine:
 *
 * | method | path | body / query | answer |
 * |---|---|---|---|
 * | GET | `/rules/get?vaspDID=` | | the VASP's rules (TransactionRuleList), incoming then outgoing, each in order |
 * | POST | `/rules/set/direction` | `{vaspDID, ruleSet: {incoming?, outgoing?}}` | 201, the VASP's rules; each direction given is replaced whole (`[]` empties it), one not given is kept |
 * | POST | `/rules/delete` | `{vaspDID, ids}` | the VASP's remaining rules; 400 `{message}` naming the ids it does not have, deleting none |
 *
 * Bearer-guarded: reading needs a role on the VASP, changing needs `manage` (a gateway's users act for its
 * subsidiaries). Refusals are NotabeneRulesEngineError `{err: {name, code, message}}`. VASP and JURISDICTION values
 * are comma-separated; a rule answers the VASPs (`vasps`) or the jurisdictions (`jurisdictions`) it names. A `source`
 * (a screening provider for RISK_SCORE and SANCTION_LIST_CHECK) answers 501: the sandbox simulates no provider.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { withTransaction } from '../../db/transaction';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { requireMember } from '../directory/routes';
import { NetworkError } from '../errors';
import { Did, documented } from '../openapi';
import {
  deleteRules,
  listRules,
  replaceRules,
  vaspNames,
  type Direction,
  type RuleInput,
  type StoredRule,
} from './store';

const ACTION_RULES = ['APPROVE', 'REJECT', 'NOT_READY', 'SEND_TO_INBOX'];
const RULE_CHECKS = [
  'ALL',
  'VASP',
  'REVIEWED_VASP_LIST',
  'JURISDICTION',
  'RISK_SCORE',
  'SANCTION_LIST_CHECK',
  'TRANSACTION_AMOUNT',
  'TRANSACTION_CREATION_TIME',
];
const REVIEW_VALUES = new Set(['TRUSTED', 'BLOCKED', 'MANUAL', 'UNREVIEWED']);
const PROVIDER_CHECKS = new Set(['RISK_SCORE', 'SANCTION_LIST_CHECK']);
const MAX_RULES = 1000;
const MAX_VALUE = 100_000;
const DID = /^did:[a-zA-Z0-9]*:.+$/;
const COUNTRY = /^[A-Z]{2}$/;
const NUMBER = /^(<=|>=|<|>|=)?\s*-?\d+(\.\d+)?$/;

/** A refusal whose body is the spec's for the route, not the sandbox's usual error shape. */
class RulesError extends NetworkError {
  constructor(
    status: number,
    name: string,
    message: string,
    private readonly body?: unknown,
  ) {
    super(status, name, message);
  }

  override toBody() {
    return (this.body ?? { err: { name: this.name, code: String(this.status), message: this.message } }) as never;
  }
}

const invalid = (message: string) => new RulesError(400, 'NotabeneRulesEngineError', message);
const notImplemented = (message: string) => new RulesError(501, 'NotImplementedError', message);
const objectOf = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const list = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

const Rule = Type.Object({
  order: Type.Number(),
  actionRule: Type.String({ enum: ACTION_RULES }),
  ruleCheck: Type.String({ enum: RULE_CHECKS }),
  ruleValue: Type.String(),
  source: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const SetBody = Type.Object({
  vaspDID: Did,
  ruleSet: Type.Object({ incoming: Type.Optional(Type.Array(Rule)), outgoing: Type.Optional(Type.Array(Rule)) }),
});
const DeleteBody = Type.Object({ vaspDID: Type.String(), ids: Type.Array(Type.String()) });

/** A direction's rules as sent, checked; throws the engine's 400 (or 501 for a provider) on the first problem. */
function parseRules(raw: unknown, direction: Direction): RuleInput[] {
  if (!Array.isArray(raw)) throw invalid(`ruleSet.${direction} must be an array of rules`);
  if (raw.length > MAX_RULES) throw invalid(`ruleSet.${direction} holds more than ${MAX_RULES} rules`);
  const orders = new Set<number>();
  return raw.map((item, i) => {
    const at = `ruleSet.${direction}[${i}]`;
    const rule = objectOf(item);
    if (!rule) throw invalid(`${at} must be a rule object`);
    const { order, actionRule, ruleCheck, ruleValue, source } = rule;
    if (typeof order !== 'number' || !Number.isFinite(order)) throw invalid(`${at}.order must be a number`);
    if (orders.has(order)) throw invalid(`There are duplicated orders in ${direction}: ${order}`);
    orders.add(order);
    if (typeof actionRule !== 'string' || !ACTION_RULES.includes(actionRule))
      throw invalid(`${at}.actionRule must be one of ${ACTION_RULES.join(', ')}`);
    if (typeof ruleCheck !== 'string' || !RULE_CHECKS.includes(ruleCheck))
      throw invalid(`${at}.ruleCheck must be one of ${RULE_CHECKS.join(', ')}`);
    if (typeof ruleValue !== 'string' || ruleValue.length > MAX_VALUE)
      throw invalid(`${at}.ruleValue must be a string of at most ${MAX_VALUE} characters`);
    if (source !== undefined && source !== null && typeof source !== 'string')
      throw invalid(`${at}.source must be a string`);
    valueCheck(ruleCheck, ruleValue, at);
    if (typeof source === 'string' && source !== '' && PROVIDER_CHECKS.has(ruleCheck))
      throw notImplemented(`${at}.source: the sandbox simulates no screening provider (${source.slice(0, 80)})`);
    return { order, actionRule, ruleCheck, ruleValue, source: typeof source === 'string' && source ? source : null };
  });
}

function valueCheck(check: string, value: string, at: string): void {
  switch (check) {
    case 'VASP': {
      const dids = list(value);
      if (dids.length === 0 || dids.some((d) => !DID.test(d)))
        throw invalid(`${at}.ruleValue must be comma-separated VASP DIDs`);
      if (new Set(dids).size !== dids.length) throw invalid('There are duplicated VASP dids in the request');
      return;
    }
    case 'JURISDICTION': {
      const codes = list(value);
      if (codes.length === 0 || codes.some((c) => !COUNTRY.test(c)))
        throw invalid(`${at}.ruleValue must be comma-separated ISO 3166-1 alpha-2 country codes`);
      return;
    }
    case 'REVIEWED_VASP_LIST':
      if (list(value).length === 0 || list(value).some((v) => !REVIEW_VALUES.has(v)))
        throw invalid(`${at}.ruleValue must be comma-separated review values (${[...REVIEW_VALUES].join(', ')})`);
      return;
    case 'RISK_SCORE':
    case 'TRANSACTION_AMOUNT':
      if (!NUMBER.test(value.trim())) throw invalid(`${at}.ruleValue must be a number, optionally compared (">=1000")`);
      return;
    case 'SANCTION_LIST_CHECK':
    case 'TRANSACTION_CREATION_TIME':
      if (value.trim() === '') throw invalid(`${at}.ruleValue must not be empty`);
      return;
  }
}

/** Registered inside the bearer-guarded API plugin. */
export function rulesRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  /** The VASP's rules as the network answers them: with the VASPs or jurisdictions a rule names. */
  const view = async (vaspDid: string) => {
    const rules = await listRules(ctx.pool, vaspDid);
    const named = rules.filter((r) => r.ruleCheck === 'VASP').flatMap((r) => list(r.ruleValue));
    const names = await vaspNames(ctx.pool, [...new Set(named)]);
    return rules.map((r: StoredRule) => ({
      ...r,
      source: r.source ?? '',
      ...(r.ruleCheck === 'VASP'
        ? { vasps: list(r.ruleValue).map((did) => ({ did, name: names.get(did) ?? did })) }
        : {}),
      ...(r.ruleCheck === 'JURISDICTION' ? { jurisdictions: list(r.ruleValue) } : {}),
    }));
  };

  api.get('/rules/get', documented({ querystring: Type.Object({ vaspDID: Did }) }), async (request) => {
    const vaspDid = (request.query as Record<string, unknown>).vaspDID;
    if (typeof vaspDid !== 'string' || !DID.test(vaspDid)) throw invalid('vaspDID: must be a DID');
    requireMember(accessOf(request), vaspDid);
    return view(vaspDid);
  });

  api.post('/rules/set/direction', documented({ body: SetBody }), async (request, reply) => {
    const body = objectOf(request.body) ?? {};
    const vaspDid = body.vaspDID;
    if (typeof vaspDid !== 'string' || !DID.test(vaspDid)) throw invalid('vaspDID: must be a DID');
    const access = accessOf(request);
    access.require(vaspDid, 'manage');
    const ruleSet = objectOf(body.ruleSet);
    if (!ruleSet) throw invalid('ruleSet: must be an object with incoming and/or outgoing rules');
    const given = (['incoming', 'outgoing'] as const).filter((d) => ruleSet[d] !== undefined);
    if (given.length === 0) throw invalid('ruleSet: give incoming, outgoing or both');
    const parsed = given.map((d) => [d, parseRules(ruleSet[d], d)] as const);
    const named = parsed.flatMap(([, rules]) =>
      rules.filter((r) => r.ruleCheck === 'VASP').flatMap((r) => list(r.ruleValue)),
    );
    const known = await vaspNames(ctx.pool, [...new Set(named)]);
    const unknown = named.find((did) => !known.has(did));
    if (unknown) throw invalid(`VASP ${unknown} not found`);
    await withTransaction(
      ctx.pool,
      async (tx) => {
        for (const [direction, rules] of parsed) await replaceRules(tx, vaspDid, direction, rules, access.userDid);
      },
      `rules:${vaspDid}`,
    );
    return reply.code(201).send(await view(vaspDid));
  });

  api.post('/rules/delete', documented({ body: DeleteBody }), async (request) => {
    const body = objectOf(request.body) ?? {};
    // Ids not found: the documented 400 (RulesDeleteByIdsResponse), `message` alone. A request the engine cannot read
    // also gets the engine's usual `err` beside it, so a client reading either shape finds the reason.
    const notFound = (message: string) =>
      new RulesError(400, 'NotabeneRulesEngineIdsNotFoundError', message, { message });
    const refuse = (message: string) =>
      new RulesError(400, 'NotabeneRulesEngineError', message, {
        message,
        err: { name: 'NotabeneRulesEngineError', code: '400', message },
      });
    const vaspDid = body.vaspDID;
    if (typeof vaspDid !== 'string' || !DID.test(vaspDid)) throw refuse('vaspDID: must be a DID');
    accessOf(request).require(vaspDid, 'manage');
    const ids = body.ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string'))
      throw refuse('ids: must be a non-empty array of rule ids');
    if (ids.length > MAX_RULES * 2) throw refuse(`ids: at most ${MAX_RULES * 2} ids`);
    const { missing } = await withTransaction(
      ctx.pool,
      (tx) => deleteRules(tx, vaspDid, ids as string[]),
      `rules:${vaspDid}`,
    );
    if (missing.length) throw notFound(`There are ids that were not found: ${JSON.stringify(missing)}`);
    return view(vaspDid);
  });
}
