/**
 * The console's lists: transfers over both directions (the transfer_view projection the workflows keep current),
 * address-book runs and key rotations. Each is ordered by a timestamp then a unique id and paged with an opaque
 * cursor; every filter is checked, and a bad one answers 400 naming the query parameter.
 */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { TransferContext } from '../../../outgoing/context';
import { Type, type Static } from 'typebox';
import { listAddressBookRuns } from '../../../address-book/store/runs';
import { auditLogCsv } from '../../../audit/csv-export';
import { listAuditLog, type AuditFilter } from '../../../audit/store';
import { listKeyRotations } from '../../../keys/rotation-store';
import type { ListOrder } from '../../../db/listing';
import { getTransferView, listTransferViews, type TransferViewFilter } from '../../../transfer-view/store';
import { NotFoundError, ValidationError } from '../../../lib/errors';
import { decodeCursor, encodeCursor, type CursorKey } from '../../../lib/listing/cursor';
import { FreeText } from '../../../lib/text';
import type { Logger } from '../../../lib/logger';
import type { GroupConfig } from '../../../config';
import { rebuildTransferView } from '../../transfers/rebuild-list';
import { needTransfers } from '../../transfers/start-outgoing';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { transferRowFor } from '../screening-visibility';

const DID = Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 200 });
const Timestamp = Type.String({
  maxLength: 40,
  description: 'An ISO 8601 date or date-time, e.g. 2026-11-24 or 2026-11-24T10:00:00Z',
});
/** The query parameters of every paged list: rows per page, the cursor of the next page, the order. */
export const Paging = {
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'rows per page, 1 to 200 (default 50)' })),
  cursor: Type.Optional(Type.String({ maxLength: 1024, description: 'nextCursor of the previous page, unchanged' })),
  order: Type.Optional(
    Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
      description: 'asc: oldest first; desc (default): newest first',
    }),
  ),
};
export const PageOf = <T extends ReturnType<typeof Type.Object>>(row: T) =>
  Type.Object({
    data: Type.Array(row),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
  });

const TransferQuery = Type.Object(
  {
    direction: Type.Optional(Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')])),
    status: Type.Optional(
      Type.String({
        pattern: '^[A-Z_]{2,40}(,[A-Z_]{2,40}){0,19}$',
        description: 'one status or several, comma-separated (ACCEPTED,DECLINED)',
      }),
    ),
    needs: Type.Optional(
      Type.Union([Type.Literal('review'), Type.Literal('routing'), Type.Literal('either')], {
        description: 'only transfers waiting for a person: a screening review, manual routing, or either',
      }),
    ),
    subsidiary: Type.Optional(DID),
    counterparty: Type.Optional(DID),
    asset: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9:/._-]{1,200}$' })),
    createdFrom: Type.Optional(Timestamp),
    createdTo: Type.Optional(Timestamp),
    q: Type.Optional(
      FreeText({
        minLength: 3,
        maxLength: 100,
        description: 'text in the transaction id, the reference or the transfer id (3 characters at least)',
      }),
    ),
    ...Paging,
  },
  { additionalProperties: false },
);

const TransferRow = Type.Object({
  workflowId: Type.String(),
  direction: Type.String(),
  id: Type.String(),
  transactionId: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  phase: Type.Union([Type.String(), Type.Null()]),
  final: Type.Boolean(),
  needsReview: Type.Boolean(),
  needsRouting: Type.Boolean(),
  escalated: Type.Boolean(),
  subsidiaryDid: Type.Union([Type.String(), Type.Null()]),
  counterpartyDid: Type.Union([Type.String(), Type.Null()]),
  asset: Type.Union([Type.String(), Type.Null()]),
  amount: Type.Union([Type.String(), Type.Null()]),
  hits: Type.Optional(
    Type.Unknown({
      description: 'screening hits: sanctions-list entries and scores; only for the compliance and admin roles',
    }),
  ),
  decision: Type.Unknown({
    description: 'the decision and who made it; its reason only for the compliance and admin roles',
  }),
  deadlineAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const RunQuery = Type.Object(
  {
    vaspDID: Type.Optional(DID),
    status: Type.Optional(Type.Union(['running', 'succeeded', 'failed', 'skipped'].map((s) => Type.Literal(s)))),
    ...Paging,
  },
  { additionalProperties: false },
);
const Nullable = (t: ReturnType<typeof Type.String> | ReturnType<typeof Type.Number>) => Type.Union([t, Type.Null()]);
const RunRow = Type.Object({
  runId: Type.String(),
  vaspDid: Type.String(),
  workflowId: Type.String(),
  trigger: Type.String(),
  mode: Type.String(),
  status: Type.String(),
  phase: Type.String(),
  startedAt: Type.String(),
  finishedAt: Nullable(Type.String()),
  desired: Nullable(Type.Number()),
  toAdd: Nullable(Type.Number()),
  toUpdate: Nullable(Type.Number()),
  toRemove: Nullable(Type.Number()),
  rejected: Type.Number(),
  error: Nullable(Type.String()),
});

const RotationQuery = Type.Object(
  {
    vaspDID: Type.Optional(DID),
    status: Type.Optional(Type.Union(['running', 'completed', 'failed'].map((s) => Type.Literal(s)))),
    ...Paging,
  },
  { additionalProperties: false },
);
const RotationRow = Type.Object({
  workflowId: Type.String(),
  runId: Type.String(),
  vaspDid: Type.String(),
  requestedBy: Type.String(),
  reason: Type.String(),
  status: Type.String(),
  step: Nullable(Type.String()),
  newKeyId: Nullable(Type.String()),
  newDid: Nullable(Type.String()),
  previousDid: Nullable(Type.String()),
  error: Type.Unknown(),
  startedAt: Type.String(),
  finishedAt: Nullable(Type.String()),
});

const AuditQuery = Type.Object(
  {
    actor: Type.Optional(FreeText({ minLength: 1, maxLength: 200 })),
    action: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9_.-]{1,100}$',
        description: 'an action (incoming.decline) or a prefix ending in a dot (incoming.)',
      }),
    ),
    subject: Type.Optional(FreeText({ minLength: 1, maxLength: 300 })),
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
    ...Paging,
  },
  { additionalProperties: false },
);
const AuditRowSchema = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor: Type.String({
    description: 'who, by a stable id: oidc:<sub>, apikey:<id>, cli:<OS user>, system:<component>',
  }),
  actorName: Type.Union([Type.String(), Type.Null()], {
    description: "for display: the principal's name (a person may change it at the identity provider)",
  }),
  action: Type.String(),
  subject: Type.String(),
  details: Type.Unknown(),
  chain: Type.String({ description: "the hash chain the row belongs to (the action's first segment)" }),
  seq: Type.Integer({ description: 'its place in the chain, from 1' }),
  prevHash: Type.String({ description: "the previous row's hash (SHA-256, hex); 64 zeros for the first" }),
  hash: Type.String({
    description: 'SHA-256 over the row and prevHash; `npm run cli -- audit verify` checks the chain',
  }),
});
/** Rows one CSV export holds at most; a narrower filter exports the rest. */
export const AUDIT_EXPORT_MAX = 100_000;

function auditFilter(q: Static<typeof AuditQuery>): AuditFilter {
  const from = timestamp(q.from, 'from');
  const to = timestamp(q.to, 'to');
  if (from && to && from >= to) throw new ValidationError('querystring.to', 'must be later than from');
  return { actor: q.actor, action: q.action, subject: q.subject, from, to };
}

const MAX_LIMIT = 200;

/** The paging parameters, checked. */
export function paging(q: { limit?: string; cursor?: string; order?: string }): {
  limit: number;
  order: ListOrder;
  cursor?: CursorKey;
} {
  const limit = q.limit === undefined ? 50 : Number(q.limit);
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw new ValidationError('querystring.limit', `must be from 1 to ${MAX_LIMIT}`);
  return {
    limit,
    order: q.order === 'asc' ? 'asc' : 'desc',
    ...(q.cursor !== undefined ? { cursor: decodeCursor(q.cursor) } : {}),
  };
}

function timestamp(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw);
  const at = ok ? new Date(raw) : undefined;
  if (!at || Number.isNaN(at.getTime())) {
    throw new ValidationError(
      `querystring.${name}`,
      'must be an ISO 8601 date (2026-11-24) or date-time with a zone (2026-11-24T10:00:00Z)',
    );
  }
  return at;
}

/** The transfer list's filters, checked: a bad one is a 400 naming the parameter. */
export function transferFilter(q: Static<typeof TransferQuery>): TransferViewFilter {
  const createdFrom = timestamp(q.createdFrom, 'createdFrom');
  const createdTo = timestamp(q.createdTo, 'createdTo');
  if (createdFrom && createdTo && createdFrom >= createdTo)
    throw new ValidationError('querystring.createdTo', 'must be later than createdFrom');
  const text = q.q?.trim().toLowerCase();
  if (q.q !== undefined && (text ?? '').length < 3)
    throw new ValidationError('querystring.q', 'must hold at least 3 characters besides spaces');
  return {
    direction: q.direction,
    statuses: q.status ? [...new Set(q.status.split(','))] : undefined,
    needs: q.needs,
    subsidiaryDid: q.subsidiary,
    counterpartyDid: q.counterparty,
    asset: q.asset,
    createdFrom,
    createdTo,
    text,
  };
}

/** A store's page as every list answers it: `{data, nextCursor}`, the cursor null on the last page. */
export const pageAnswer = <T>(p: { rows: T[]; next?: CursorKey }) => ({
  data: p.rows,
  nextCursor: p.next ? encodeCursor(p.next) : null,
});

export interface ListRouteDeps {
  pool: Pool;
  temporal: Client;
  logger: Logger;
  group: GroupConfig;
  transfers?: TransferContext;
}

export function listRoutes(app: FastifyInstance, deps: ListRouteDeps) {
  app.get(
    '/v1/transfers',
    {
      config: { roles: access.read },
      schema: {
        tags: ['console'],
        summary: 'Transfers in both directions, filtered, newest (or oldest) first, a page at a time',
        description:
          'Reads the transfer list the workflows keep current at each change of state. Filters combine with AND. ' +
          '`needs=review` (or `routing`, `either`) with `order=asc` is the review queue. Pass `nextCursor` back as ' +
          '`cursor` for the next page; a bad filter answers 400 naming it.',
        querystring: TransferQuery,
        response: { 200: PageOf(TransferRow) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof TransferQuery>;
      const principal = principalOf(request);
      const found = await listTransferViews(deps.pool, transferFilter(q), paging(q));
      return pageAnswer({ ...found, rows: found.rows.map((row) => transferRowFor(principal, row)) });
    },
  );

  app.get(
    '/v1/transfers/list/:workflowId',
    {
      config: { roles: access.read },
      schema: {
        tags: ['console'],
        summary: 'One transfer as the list shows it, by its workflow id (outgoing-<id> or incoming-<transaction id>)',
        params: Type.Object({ workflowId: Type.String({ pattern: '^(outgoing|incoming)-[A-Za-z0-9._:-]{1,128}$' }) }),
        response: { 200: Type.Object({ ...TransferRow.properties, version: Type.Number() }) },
      },
    },
    async (request) => {
      const { workflowId } = request.params as { workflowId: string };
      const found = await getTransferView(deps.pool, workflowId);
      if (!found) throw new NotFoundError(`no transfer ${workflowId} in the list`, { field: 'workflowId' });
      return transferRowFor(principalOf(request), found);
    },
  );

  app.get(
    '/v1/address-book/runs',
    {
      config: { roles: access.read },
      schema: {
        tags: ['console'],
        summary: 'Address-book reconciliation runs of every subsidiary (or one), newest (or oldest) first',
        querystring: RunQuery,
        response: { 200: PageOf(RunRow) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof RunQuery>;
      return pageAnswer(
        await listAddressBookRuns(
          deps.pool,
          { vaspDids: q.vaspDID ? [q.vaspDID] : undefined, status: q.status },
          paging(q),
        ),
      );
    },
  );

  app.get(
    '/v1/audit-log',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['console'],
        summary: 'The audit log, searched by actor, action (or prefix), subject and time, newest (or oldest) first',
        querystring: AuditQuery,
        response: { 200: PageOf(AuditRowSchema) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof AuditQuery>;
      return pageAnswer(await listAuditLog(deps.pool, auditFilter(q), paging(q)));
    },
  );

  app.get(
    '/v1/audit-log/export',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['console'],
        summary: `The audit log rows matching the same filters as CSV (at, actor, actor's name, action, subject, details as JSON, chain, seq, prevHash, hash), oldest first, at most ${AUDIT_EXPORT_MAX.toLocaleString('en')}`,
        description:
          "A cell a spreadsheet would take for a formula (starting with =, +, -, @, tab or carriage return) starts with ' (lib/spreadsheet-csv.ts).",
        querystring: Type.Object(
          {
            ...AuditQuery.properties,
            limit: Type.Optional(Type.Never()),
            cursor: Type.Optional(Type.Never()),
            order: Type.Optional(Type.Never()),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { csv, rows, truncated } = await auditLogCsv(
        deps.pool,
        auditFilter(request.query as Static<typeof AuditQuery>),
        AUDIT_EXPORT_MAX,
      );
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="audit-log.csv"')
        .header('x-rows', String(rows))
        .header('x-truncated', truncated ? 'true' : 'false')
        .send(csv);
    },
  );

  app.get(
    '/v1/key-rotations',
    {
      config: { roles: access.read },
      schema: {
        tags: ['console'],
        summary: "Key rotations of the group's VASPs (API, CLI and schedules), newest (or oldest) first",
        querystring: RotationQuery,
        response: { 200: PageOf(RotationRow) },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof RotationQuery>;
      return pageAnswer(await listKeyRotations(deps.pool, { vaspDid: q.vaspDID, status: q.status }, paging(q)));
    },
  );

  app.post(
    '/v1/transfers/list/rebuild',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['console'],
        summary: 'Rebuild the transfer list from the network and the running workflows (fills gaps; newer rows stay)',
        description:
          "Pages through GET /tx/list for every VASP of the group; an unfinished transfer whose workflow runs is written from the workflow's own state. See docs/console.md.",
        response: {
          200: Type.Object({ listed: Type.Number(), fromNetwork: Type.Number(), fromWorkflows: Type.Number() }),
        },
      },
    },
    async () => {
      const ctx = needTransfers(deps);
      return rebuildTransferView({
        pool: deps.pool,
        network: ctx.network,
        temporal: deps.temporal,
        group: deps.group,
        logger: deps.logger,
      });
    },
  );
}
