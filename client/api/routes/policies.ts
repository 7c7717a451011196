/**
 * Decision policies per VASP (a subsidiary's, or the group's under the gateway's DID): read with their history,
 * change (a new immutable version, active or in shadow, audited), simulate, backtest over stored transfers, and the
 * comparison of shadow decisions with the active ones.
 */
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { inGroup, type GroupConfig } from '../../../lib/group';
import { ConfigError, NotFoundError, ValidationError } from '../../../lib/errors';
import type { NetworkClient } from '../../../network/client';
import { pushPolicy } from '../../../policy/push';
import { FreeText } from '../../../lib/text';
import { REVIEW_VALUES, UNREVIEWED } from '../../../counterparties/types';
import { MAX_RULE_VALUE_LENGTH, MAX_RULES_PER_DIRECTION } from '../../../policy/rules';
import { ACTION_RULES, RULE_CHECKS, type PolicyDocument, type PolicyVersion } from '../../../policy/types';
import { ownPolicies, policiesFor, policyHistory, shadowComparison } from '../../../policy/store';
import { assertValidDocument, changePolicy, stopShadow } from '../../../policy/update';
import { simulatePolicy, storedReviews } from '../../../policy/simulate';
import { backtestPolicy, MAX_BACKTEST_DAYS, type FactSources } from '../../../policy/backtest';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';

export interface PolicyRouteDeps extends Partial<FactSources> {
  pool: Pool;
  group: GroupConfig;
  /** The network client (outgoing transfers' context holds the API's), for pushing a policy to the rules engine. */
  transfers?: { network: NetworkClient };
}

const DID_PATTERN = '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$';
const Params = Type.Object({ vaspDID: Type.String({ pattern: DID_PATTERN, maxLength: 200 }) });
const Did = Type.String({ pattern: DID_PATTERN, maxLength: 200 });
const Uuid = Type.String({
  description: 'The id of a saved version',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});
const Timestamp = Type.String({
  maxLength: 40,
  description: 'An ISO 8601 date or date-time, e.g. 2026-11-24 or 2026-11-24T10:00:00Z',
});
const Direction = Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')]);
const Action = Type.String({ enum: [...ACTION_RULES] });

const Rule = Type.Object(
  {
    order: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Unique per direction; lowest first' }),
    actionRule: Action,
    ruleCheck: Type.String({
      enum: [...RULE_CHECKS],
      description: "The network's checks, and ASSET and CUSTOMER_JURISDICTION (ours only: never pushed)",
    }),
    ruleValue: Type.String({
      maxLength: MAX_RULE_VALUE_LENGTH,
      description:
        'ALL: "" or "ALL"; VASP: comma-separated DIDs; JURISDICTION, CUSTOMER_JURISDICTION: comma-separated ISO 3166-1 alpha-2; ASSET: comma-separated symbols; REVIEWED_VASP_LIST: comma-separated TRUSTED, BLOCKED, MANUAL, UNREVIEWED; RISK_SCORE (0-100), TRANSACTION_AMOUNT (in the policy currency): a comparison, e.g. ">=1000"; SANCTION_LIST_CHECK: HIT or NO_HIT; TRANSACTION_CREATION_TIME: a UTC window HH:MM-HH:MM',
    }),
    source: Type.Optional(FreeText({ maxLength: 200, description: 'The provider of a risk score or sanctions check' })),
  },
  { additionalProperties: false },
);
const Rules = Type.Array(Rule, {
  maxItems: MAX_RULES_PER_DIRECTION,
  description: `At most ${MAX_RULES_PER_DIRECTION} rules, first match wins, no match sends to a person`,
});
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217: the currency amounts are compared in' });
const DocumentFields = { currency: Currency, incoming: Rules, outgoing: Rules };
const Document = Type.Object(DocumentFields, { additionalProperties: false });

const PutBody = Type.Object(
  {
    ...DocumentFields,
    note: FreeText({ maxLength: 1000, description: 'Why the change (audited, shown in the history)' }),
    activate: Type.Optional(Type.Boolean({ description: 'Make it the deciding version (default true)' })),
    shadow: Type.Optional(
      Type.Boolean({ description: 'Run it beside the active version instead: recorded, never acted on' }),
    ),
  },
  { additionalProperties: false },
);

const VersionSummaryFields = {
  id: Type.String(),
  vaspDid: Type.String({ description: "Whose policy: a subsidiary's DID, or the gateway's for the group's" }),
  version: Type.Integer(),
  contentHash: Type.String({ description: 'sha256 of the canonical document' }),
  author: Type.String(),
  createdAt: Type.String(),
  note: Type.String(),
};
const VersionSummary = Type.Object(VersionSummaryFields);
const Version = Type.Object({ ...VersionSummaryFields, ...DocumentFields });
const PolicyRef = Type.Union([
  Type.Object({
    vaspDid: Type.String(),
    versionId: Type.String(),
    version: Type.Integer(),
    contentHash: Type.String(),
  }),
  Type.Null(),
]);

const PolicyState = Type.Object({
  vaspDID: Type.String(),
  source: Type.Union([Type.Literal('own'), Type.Literal('group'), Type.Literal('default')], {
    description: "Whose active version decides: the VASP's own, the group's, or the built-in default (none)",
  }),
  active: Type.Union([Version, Type.Null()]),
  shadow: Type.Union([Version, Type.Null()]),
  history: Type.Array(VersionSummary, { description: "The VASP's own versions, newest first" }),
});

const Decision = Type.Object({
  action: Action,
  policy: PolicyRef,
  rule: Type.Optional(Rule),
  reason: Type.String(),
  override: Type.Optional(Type.String()),
  unknownFact: Type.Optional(Type.String()),
});

const Facts = Type.Object(
  {
    direction: Direction,
    counterpartyDid: Type.Optional(Did),
    counterpartyReview: Type.Optional(Type.String({ enum: [...REVIEW_VALUES, UNREVIEWED] })),
    counterpartyJurisdiction: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    customerJurisdiction: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    asset: Type.String({ pattern: '^[A-Za-z0-9._-]{1,32}$' }),
    amount: Type.String({ pattern: '^[0-9]{1,78}(\\.[0-9]{1,36})?$', description: 'As on the transfer' }),
    amountFiat: Type.Optional(Type.Number({ minimum: 0, description: "In the policy's currency" })),
    createdAt: Type.Optional(Timestamp),
    riskScore: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    sanctionsHit: Type.Optional(Type.Boolean()),
    personalDataReadable: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const FactsOut = Type.Object({
  direction: Direction,
  vaspDid: Type.String(),
  counterpartyDid: Type.Optional(Type.String()),
  counterpartyReview: Type.String(),
  counterpartyJurisdiction: Type.Optional(Type.String()),
  customerJurisdiction: Type.Optional(Type.String()),
  asset: Type.String(),
  amount: Type.String(),
  amountFiat: Type.Optional(Type.Number()),
  priceSource: Type.Optional(Type.String()),
  createdAt: Type.String(),
  riskScore: Type.Optional(Type.Number()),
  sanctionsHit: Type.Optional(Type.Boolean()),
  personalDataReadable: Type.Optional(Type.Boolean()),
});
const SimulateBody = Type.Object({ facts: Facts, candidate: Type.Optional(Document) }, { additionalProperties: false });

const BacktestBody = Type.Object(
  {
    candidate: Type.Optional(Document),
    versionId: Type.Optional(Uuid),
    from: Timestamp,
    to: Timestamp,
    direction: Type.Optional(Direction),
  },
  { additionalProperties: false },
);
const Change = Type.Object({
  transferId: Type.String(),
  direction: Direction,
  createdAt: Type.String(),
  from: Action,
  to: Action,
  ruleBefore: Type.Union([Type.Integer(), Type.Null()]),
  ruleAfter: Type.Union([Type.Integer(), Type.Null()]),
});
const BacktestResult = Type.Object({
  transfers: Type.Integer(),
  changed: Type.Integer(),
  byChange: Type.Record(Type.String(), Type.Integer(), { description: '"APPROVE→SEND_TO_INBOX": n' }),
  examples: Type.Array(Change, { description: 'Up to 20 changed decisions' }),
  active: PolicyRef,
  candidate: PolicyRef,
  recorded: Type.Integer({ description: 'Transfers whose recorded decision and facts were used' }),
});

const ShadowQuery = Type.Object(
  { from: Type.Optional(Timestamp), to: Type.Optional(Timestamp) },
  { additionalProperties: false },
);
const ShadowResult = Type.Object({
  vaspDID: Type.String(),
  shadow: Type.Union([VersionSummary, Type.Null()]),
  from: Type.String(),
  to: Type.String(),
  decisions: Type.Integer(),
  agree: Type.Integer(),
  disagree: Type.Integer(),
  byChange: Type.Record(Type.String(), Type.Integer()),
  examples: Type.Array(
    Type.Object({
      transferId: Type.String(),
      direction: Direction,
      decidedAt: Type.String(),
      active: Type.String(),
      shadow: Type.String(),
      ruleActive: Type.Union([Type.Integer(), Type.Null()]),
      ruleShadow: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
});

const PushBody = Type.Object(
  {
    skipUnsupported: Type.Optional(
      Type.Boolean({ description: 'Push without the rules the network does not know (ASSET, CUSTOMER_JURISDICTION)' }),
    ),
  },
  { additionalProperties: false },
);
const PushResult = Type.Object({
  policy: PolicyRef,
  pushed: Type.Object({ incoming: Type.Integer(), outgoing: Type.Integer() }),
  skipped: Type.Array(Type.Object({ direction: Direction, order: Type.Integer(), ruleCheck: Type.String() })),
  rules: Type.Array(
    Type.Object({
      id: Type.String(),
      vaspDID: Type.String(),
      direction: Type.Optional(Direction),
      order: Type.Number(),
      actionRule: Type.String(),
      ruleCheck: Type.String(),
      ruleValue: Type.String(),
      source: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
    { description: "The VASP's rules as the network answered them" },
  ),
});

const tags = ['policies'];
const DAY = 86_400_000;

function timestamp(raw: string, field: string): Date {
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw);
  const at = ok ? new Date(raw) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new ValidationError(field, 'must be an ISO 8601 date (2026-11-24) or date-time with a zone');
  return at;
}

function range(from: string, to: string, prefix = ''): { from: Date; to: Date } {
  const r = { from: timestamp(from, `${prefix}from`), to: timestamp(to, `${prefix}to`) };
  if (r.from >= r.to) throw new ValidationError(`${prefix}to`, 'must be later than from');
  if (r.to.getTime() - r.from.getTime() > MAX_BACKTEST_DAYS * DAY)
    throw new ValidationError(`${prefix}to`, `the range may span at most ${MAX_BACKTEST_DAYS} days`);
  return r;
}

const documentOf = (body: { currency: string; incoming: unknown; outgoing: unknown }): PolicyDocument =>
  ({ currency: body.currency, incoming: body.incoming, outgoing: body.outgoing }) as PolicyDocument;

const summary = (v: PolicyVersion) => ({
  id: v.id,
  vaspDid: v.vaspDid,
  version: v.version,
  contentHash: v.contentHash,
  author: v.author,
  createdAt: v.createdAt,
  note: v.note,
});

export function policyRoutes(app: FastifyInstance, routeDeps: PolicyRouteDeps): void {
  const deps = { ...routeDeps, reviewOf: routeDeps.reviewOf ?? storedReviews(routeDeps.pool) };
  const gateway = (vaspDid: string) => deps.group.gatewayDid ?? vaspDid;
  const requireGroupVasp = (vaspDid: string) => {
    if (!inGroup(deps.group, vaspDid))
      throw new NotFoundError(`VASP ${vaspDid} is not part of this system's group`, {
        field: 'vaspDID',
        rule: 'must be the gateway or one of the subsidiaries configured in GATEWAY_VASP_DID / SUBSIDIARY_VASP_DIDS',
      });
    return vaspDid;
  };
  const vaspOf = (request: { params: unknown }) => requireGroupVasp((request.params as Static<typeof Params>).vaspDID);

  app.get(
    '/v1/policies/:vaspDID',
    {
      config: { roles: access.read },
      schema: {
        tags,
        summary: "A VASP's policy: the active version (its own, else the group's), the shadow version, the history",
        params: Params,
        response: { 200: PolicyState },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const [effective, own, history] = await Promise.all([
        policiesFor(deps.pool, vaspDid, gateway(vaspDid)),
        ownPolicies(deps.pool, vaspDid),
        policyHistory(deps.pool, vaspDid),
      ]);
      return {
        vaspDID: vaspDid,
        source: own.active ? 'own' : effective.active ? 'group' : 'default',
        active: effective.active ?? null,
        shadow: effective.shadow ?? null,
        history: history.map(summary),
      };
    },
  );

  app.put(
    '/v1/policies/:vaspDID',
    {
      config: { roles: access.compliance },
      schema: {
        tags,
        summary: "Change a VASP's policy: a new immutable version, made active (default) or run in shadow; audited",
        description:
          'Under the gateway DID: the group policy, used by every subsidiary without its own. The same document as the latest version answers that version (no new one). 400 names the field and the rule; nothing is saved then.',
        params: Params,
        body: PutBody,
        response: {
          200: Type.Object({
            version: Version,
            created: Type.Boolean({ description: 'false: the document was the latest version already' }),
            activated: Type.Boolean(),
            shadow: Type.Boolean(),
          }),
        },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const body = request.body as Static<typeof PutBody>;
      return changePolicy(
        deps.pool,
        { vaspDid, document: documentOf(body), note: body.note, activate: body.activate, shadow: body.shadow },
        principalOf(request),
      );
    },
  );

  app.post(
    '/v1/policies/:vaspDID/simulate',
    {
      config: { roles: access.read },
      schema: {
        tags,
        summary: 'Evaluate facts against the active version, or a candidate document: the decision, the rule and why',
        description:
          "Facts not given are looked up as a live decision would: the counterparty's review; its jurisdiction and the price only when a rule needs them.",
        params: Params,
        body: SimulateBody,
        response: { 200: Type.Object({ decision: Decision, facts: FactsOut }) },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const body = request.body as Static<typeof SimulateBody>;
      if (body.candidate) assertValidDocument(documentOf(body.candidate), 'candidate.');
      if (body.facts.createdAt !== undefined)
        body.facts.createdAt = timestamp(body.facts.createdAt, 'facts.createdAt').toISOString();
      return simulatePolicy(deps, {
        vaspDid,
        facts: body.facts as Parameters<typeof simulatePolicy>[1]['facts'],
        candidate: body.candidate && documentOf(body.candidate),
      });
    },
  );

  app.post(
    '/v1/policies/:vaspDID/backtest',
    {
      config: { roles: access.compliance },
      schema: {
        tags,
        summary: 'Run a candidate (or a saved version) over the stored transfers of a range beside the active version',
        description: `At most ${MAX_BACKTEST_DAYS} days. Reads the transfers' metadata and screening results, never personal data; a transfer a policy decided keeps its recorded decision and facts.`,
        params: Params,
        body: BacktestBody,
        response: { 200: BacktestResult },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const body = request.body as Static<typeof BacktestBody>;
      if ((body.candidate === undefined) === (body.versionId === undefined))
        throw new ValidationError('candidate', 'give either a candidate document or the versionId of a saved version');
      if (body.candidate) assertValidDocument(documentOf(body.candidate), 'candidate.');
      const { from, to } = range(body.from, body.to);
      return backtestPolicy(deps, {
        vaspDid,
        candidate: body.candidate
          ? { document: documentOf(body.candidate) }
          : { versionId: body.versionId!.toLowerCase() },
        from,
        to,
        direction: body.direction,
      });
    },
  );

  app.post(
    '/v1/policies/:vaspDID/push',
    {
      config: { roles: access.compliance },
      schema: {
        tags,
        summary: "Push the VASP's active version to the network's rules engine (for VASPs the network decides for)",
        description:
          'Replaces both directions at the network. ASSET and CUSTOMER_JURISDICTION rules are ours only: 400 naming them, unless skipUnsupported. Audited.',
        params: Params,
        body: Type.Optional(PushBody),
        response: { 200: PushResult },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const network = deps.transfers?.network;
      if (!network)
        throw new ConfigError(
          'NETWORK_CLIENT_ID',
          'the API was started without a network client',
          'Start it through client/main.ts',
        );
      const body = (request.body ?? {}) as Static<typeof PushBody>;
      return pushPolicy(
        { pool: deps.pool, network, gatewayDid: gateway(vaspDid) },
        { vaspDid, skipUnsupported: body.skipUnsupported === true },
        principalOf(request),
      );
    },
  );

  app.get(
    '/v1/policies/:vaspDID/shadow',
    {
      config: { roles: access.read },
      schema: {
        tags,
        summary: "The shadow version's recorded decisions beside the active ones: agreements, differences, examples",
        description: 'Over [from, to) (default: the last 30 days), at most 366 days.',
        params: Params,
        querystring: ShadowQuery,
        response: { 200: ShadowResult },
      },
    },
    async (request) => {
      const vaspDid = vaspOf(request);
      const q = request.query as Static<typeof ShadowQuery>;
      const now = new Date();
      const r = range(
        q.from ?? new Date(now.getTime() - 30 * DAY).toISOString(),
        q.to ?? new Date(now.getTime() + 1000).toISOString(),
        'querystring.',
      );
      const [own, comparison] = await Promise.all([
        ownPolicies(deps.pool, vaspDid),
        shadowComparison(deps.pool, vaspDid, r),
      ]);
      return {
        vaspDID: vaspDid,
        shadow: own.shadow ? summary(own.shadow) : null,
        from: r.from.toISOString(),
        to: r.to.toISOString(),
        ...comparison,
      };
    },
  );

  app.delete(
    '/v1/policies/:vaspDID/shadow',
    {
      config: { roles: access.compliance },
      schema: {
        tags,
        summary: "Stop running the VASP's shadow version (its recorded decisions stay); audited",
        params: Params,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await stopShadow(deps.pool, vaspOf(request), principalOf(request));
      return reply.code(204).send();
    },
  );
}
