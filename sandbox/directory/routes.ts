/**
 * The network directory: profile updates (`POST /tf/vasps/update`, which is how a VASP publishes its `pii_didkey`), the
 * public "simple" views (`GET /tf/simple/vasps/:did`, `GET /tf/simple/vasps`; auth optional) and VASP settings
 * (`PUT /tf/vasps/:did/settings`, `GET /tf/vasps/:did/getSettings`). Shapes: the network's v1
 * OpenAPI (tf_VASPUpdate, tf_VASPInfo, tf_VASPInfoSimple, tf_VASPListSimple, Settings).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { parseDidKey } from '../../lib/crypto';
import { documented } from '../openapi';
import { ValidationError } from '../../lib/errors';
import { assertValid } from '../../lib/validation';
import { Access } from '../auth/access';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { badRequest, forbidden, notFound, unauthorized } from '../errors';
import {
  getVaspSettings,
  listSimpleVasps,
  ORDERABLE,
  simpleVasp,
  updateVaspSettings,
  vaspInfo,
  type ListQuery,
  type VaspSettings,
} from './profiles';
import { updateProfile } from './store';
import { isSimulated, rotateSimulatedKey } from '../counterparties';
import { REVIEW_VALUES } from '../reviews/routes';

const DID_PATTERN = '^did:[a-zA-Z0-9]*:.*$';
const Did = Type.String({ pattern: DID_PATTERN });
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
/** Field names the directory manages itself: a profile update cannot set them. */
const READ_ONLY_FIELDS = new Set([
  'did',
  'documents',
  'hasAdmin',
  'isNotifiable',
  'isActiveSender',
  'isActiveReceiver',
  'issuers',
]);
/** Names that are JavaScript's own on every object: a profile field so named would be read as (or replace) the prototype's. */
const RESERVED_FIELDS = new Set(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty']);
/** Fields that hold a did:key: checked like the SDK should (it accepts any key type and then encrypts garbage). */
const DID_KEY_FIELDS = new Set(['pii_didkey']);

const UpdateBody = Type.Object({
  did: Type.Optional(Did),
  fields: Type.Array(
    Type.Object({
      fieldName: Type.String({ minLength: 1 }),
      values: Type.Array(Type.Object({ value: Type.Unknown() }), { minItems: 1, maxItems: 20 }),
    }),
    { minItems: 1, maxItems: 50 },
  ),
});

const SettingsBody = Type.Object({
  autoconfirm: Type.Optional(Type.Boolean()),
  autoredirect: Type.Optional(Type.Boolean()),
  vaspDiscoverability: Type.Optional(Type.Boolean()),
  statusToProcessBlockchain: Type.Optional(
    Type.Union([
      Type.Literal('CREATED'),
      Type.Literal('SENT'),
      Type.Literal('ACK'),
      Type.Literal('ACCEPTED'),
      Type.Null(),
    ]),
  ),
});

const VaspParams = Type.Object({ vaspDID: Did });

/** Beyond this the offset (page × per_page) overflows PostgreSQL's bigint; no directory has that many pages. */
const MAX_PAGE = 1_000_000;
/** `order` is parsed by hand (parseOrder): a pattern with nested repetition backtracked exponentially on it. */
const MAX_ORDER_LENGTH = 200;

const ListQuerySchema = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PAGE })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  order: Type.Optional(Type.String()),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  fields: Type.Optional(Type.String({ maxLength: 2000 })),
  all: Type.Optional(Type.Boolean()),
  listingType: Type.Optional(
    Type.Union([Type.Literal('exclude_subsidiaries'), Type.Literal('exclude_gateways'), Type.Literal('all')]),
  ),
  // Only the VASPs this VASP reviewed (sandbox/reviews), with this value; the caller must be a member of the reviewer.
  reviewedByVaspDID: Type.Optional(Type.String({ pattern: DID_PATTERN, maxLength: 1024 })),
  reviewValue: Type.Optional(Type.Union(REVIEW_VALUES.map((v) => Type.Literal(v)))),
});

const DEFAULT_PER_PAGE = 100;

/** `fields=a,b` → names, refusing what cannot be a field name (the network errors on unrecognised names too). */
function requestedFields(raw: string | undefined): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.find((n) => !FIELD_NAME.test(n));
  if (bad !== undefined) throw badRequest('ValidationError', `fields: "${bad.slice(0, 100)}" is not a field name`);
  return [...new Set(names)];
}

/** `column[:ASC|DESC][:NULLS FIRST|LAST]`, comma-separated, parsed by splitting (linear in the length, capped). */
function parseOrder(raw: string | undefined): ListQuery['order'] {
  const value = raw ?? 'name:ASC';
  if (value.length > MAX_ORDER_LENGTH)
    throw badRequest('ValidationError', `order: must be at most ${MAX_ORDER_LENGTH} characters`);
  const terms = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (terms.length === 0) throw badRequest('ValidationError', 'order: names no field');
  return terms.map((term) => {
    const [column = '', direction = 'ASC', nulls, ...rest] = term.split(':').map((s) => s.trim());
    // Own properties only: `constructor` or `__proto__` are "in" every object.
    if (!Object.hasOwn(ORDERABLE, column)) {
      throw badRequest(
        'ValidationError',
        `order: cannot order by "${column.slice(0, 50)}"; use ${Object.keys(ORDERABLE).join(', ')}`,
      );
    }
    if (direction !== 'ASC' && direction !== 'DESC')
      throw badRequest('ValidationError', `order: ${column}: the direction must be ASC or DESC`);
    if ((nulls !== undefined && nulls !== 'NULLS FIRST' && nulls !== 'NULLS LAST') || rest.length) {
      throw badRequest(
        'ValidationError',
        `order: ${column}: after the direction only NULLS FIRST or NULLS LAST may follow`,
      );
    }
    return {
      column,
      direction,
      ...(nulls ? { nulls: nulls === 'NULLS FIRST' ? ('FIRST' as const) : ('LAST' as const) } : {}),
    };
  });
}

/**
 * Optional authentication for the public directory: no header is fine, but a header that is present must hold a valid
 * API token (a wrong token is a client bug worth reporting, as the real API does).
 */
function optionalBearer(ctx: SandboxContext) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization;
    if (!header) return;
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthorized('Authorization header is not a bearer token');
    const verified = await ctx.tokens.verify(match[1]!, ctx.config.publicUrl);
    if ('refused' in verified) throw unauthorized(verified.refused);
    request.networkCaller = verified;
  };
}

/** 404 for an unknown VASP, 403 unless the user may act for it (any role; gateway roles cover subsidiaries). */
export function requireMember(access: Access, vaspDid: string): void {
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} has no role on VASP ${vaspDid}`);
}

/** A VASP's reviews are its own: listing by them needs a token of a member of the reviewer. */
async function reviewFilter(
  ctx: SandboxContext,
  request: FastifyRequest,
  query: Static<typeof ListQuerySchema>,
): Promise<{ vaspDid: string; reviewValue?: string } | undefined> {
  if (query.reviewedByVaspDID === undefined) {
    if (query.reviewValue !== undefined) throw badRequest('ValidationError', 'reviewValue: needs reviewedByVaspDID');
    return undefined;
  }
  if (!request.networkCaller) throw unauthorized('reviewedByVaspDID: listing by reviews needs a token');
  requireMember(await Access.load(ctx.pool, request.networkCaller.userDid), query.reviewedByVaspDID);
  return { vaspDid: query.reviewedByVaspDID, ...(query.reviewValue ? { reviewValue: query.reviewValue } : {}) };
}

/** Public (auth optional) directory reads. Registered outside the bearer-guarded API. */
export async function directoryPublicRoutes(app: FastifyInstance, ctx: SandboxContext): Promise<void> {
  const preHandler = optionalBearer(ctx);

  // The keyRotation fault (sandbox/faults): a simulated counterparty rotates its key once this lookup is answered,
  // i.e. between the originator's lookup and its encryption.
  const onResponse = async (request: FastifyRequest) => {
    if (!ctx.faults.keyRotationOn()) return;
    const { vaspDID } = request.params as { vaspDID: string };
    if ((await isSimulated(ctx.pool, vaspDID)) && ctx.faults.rotateKey())
      await rotateSimulatedKey(ctx.pool, vaspDID).catch((e: unknown) =>
        ctx.logger.warn({ err: e }, 'keyRotation fault failed'),
      );
  };
  app.get(
    '/tf/simple/vasps/:vaspDID',
    {
      preHandler,
      onResponse,
      schema: {
        params: VaspParams,
        querystring: Type.Object({ fields: Type.Optional(Type.String({ maxLength: 2000 })) }),
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const { fields } = request.query as { fields?: string };
      const view = await simpleVasp(ctx.pool, vaspDID, requestedFields(fields));
      if (!view) throw notFound(`VASP ${vaspDID} not found`);
      return view;
    },
  );

  app.get('/tf/simple/vasps', { preHandler, schema: { querystring: ListQuerySchema } }, async (request) => {
    const query = request.query as Static<typeof ListQuerySchema>;
    const order = parseOrder(query.order);
    // Fastify's coercion lets `Infinity` through an integer schema; it would reach the SQL as a 500.
    for (const name of ['page', 'per_page'] as const) {
      if (query[name] !== undefined && !Number.isSafeInteger(query[name]))
        throw badRequest('ValidationError', `${name}: must be a whole number`);
    }
    const reviewedBy = await reviewFilter(ctx, request, query);
    const page = query.all ? 0 : (query.page ?? 0);
    const perPage = query.all ? 1_000_000 : (query.per_page ?? DEFAULT_PER_PAGE);
    const { vaspRows, total } = await listSimpleVasps(ctx.pool, {
      page,
      perPage,
      order,
      q: query.q || undefined,
      listingType: query.listingType ?? 'exclude_subsidiaries',
      fields: requestedFields(query.fields),
      ...(reviewedBy ? { reviewedBy } : {}),
    });
    return {
      vasps: vaspRows,
      pagination: {
        page,
        per_page: query.all ? total : perPage,
        order: order.map((o) => `${o.column}:${o.direction}${o.nulls ? `:NULLS ${o.nulls}` : ''}`).join(','),
        total,
      },
    };
  });
}

/** Profile updates and settings. Registered inside the bearer-guarded API. */
export function directoryRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  // Validated here without coercion: fastify's would turn `true` or 12 into the field name "true" or "12".
  api.post('/tf/vasps/update', documented({ body: UpdateBody }), async (request) => {
    const access = accessOf(request);
    try {
      assertValid(UpdateBody, request.body ?? {}, '');
    } catch (e) {
      if (e instanceof ValidationError) throw badRequest('ValidationError', e.message);
      throw e;
    }
    const body = request.body as Static<typeof UpdateBody>;
    let did = body.did;
    if (!did) {
      const mine = access.vasps();
      if (mine.length !== 1)
        throw badRequest('ValidationError', 'did: is required when the user acts for more than one VASP');
      did = mine[0]!;
    }
    access.require(did, 'trustframework.updateVASP');
    const seen = new Set<string>();
    body.fields.forEach((field, i) => {
      const at = `fields[${i}]`;
      if (!FIELD_NAME.test(field.fieldName))
        throw badRequest('ValidationError', `${at}.fieldName: is not a field name`);
      if (RESERVED_FIELDS.has(field.fieldName))
        throw badRequest('ValidationError', `${at}.fieldName: ${field.fieldName} is not a field name`);
      if (READ_ONLY_FIELDS.has(field.fieldName))
        throw badRequest('ValidationError', `${at}.fieldName: ${field.fieldName} cannot be updated`);
      if (seen.has(field.fieldName))
        throw badRequest('ValidationError', `${at}.fieldName: ${field.fieldName} appears twice`);
      seen.add(field.fieldName);
      field.values.forEach(({ value }, j) => {
        if (JSON.stringify(value ?? null).length > 10_000)
          throw badRequest('ValidationError', `${at}.values[${j}].value: is longer than 10000 characters`);
      });
      if (DID_KEY_FIELDS.has(field.fieldName)) {
        if (field.values.length !== 1)
          throw badRequest('ValidationError', `${at}.values: must hold exactly one did:key`);
        try {
          parseDidKey(field.values[0]!.value, `${at}.values[0].value`);
        } catch (e) {
          if (e instanceof ValidationError) throw badRequest('ValidationError', e.message);
          throw e;
        }
      }
    });
    await updateProfile(ctx.pool, did, body.fields, access.userDid);
    return vaspInfo(ctx.pool, did);
  });

  // Checked here, not by fastify's schema validation, which would coerce `"false"`, 0 or null into a boolean and store it.
  api.put('/tf/vasps/:vaspDID/settings', documented({ params: VaspParams, body: SettingsBody }), async (request) => {
    const { vaspDID } = request.params as Static<typeof VaspParams>;
    if (!new RegExp(DID_PATTERN).test(vaspDID)) throw badRequest('ValidationError', 'vaspDID: must be a DID');
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body))
      throw badRequest('ValidationError', 'body: must be an object of settings');
    for (const name of ['autoconfirm', 'autoredirect', 'vaspDiscoverability']) {
      if (body[name] !== undefined && typeof body[name] !== 'boolean')
        throw badRequest('ValidationError', `${name}: must be a boolean`);
    }
    const status = body.statusToProcessBlockchain;
    if (status !== undefined && status !== null && !['CREATED', 'SENT', 'ACK', 'ACCEPTED'].includes(status as string)) {
      throw badRequest('ValidationError', 'statusToProcessBlockchain: must be CREATED, SENT, ACK, ACCEPTED or null');
    }
    accessOf(request).require(vaspDID, 'trustframework.updateVASP');
    return updateVaspSettings(ctx.pool, vaspDID, body as Partial<VaspSettings>);
  });

  api.get('/tf/vasps/:vaspDID/getSettings', { schema: { params: VaspParams } }, async (request) => {
    const { vaspDID } = request.params as Static<typeof VaspParams>;
    requireMember(accessOf(request), vaspDID);
    return getVaspSettings(ctx.pool, vaspDID);
  });
}
