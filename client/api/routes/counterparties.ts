/**
 * Counterparty due diligence: the group's review of each counterparty VASP and the subsidiaries' overrides. Reading is
 * for every role, reviewing for compliance; every write is audited with the review, and published at the network
 * after the answer (a network that is down delays the push to the reconciliation, never the answer).
 */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import type { GroupConfig } from '../../../config';
import { publishAfterWrite } from '../../../counterparties/push';
import {
  checkDid,
  checkSubsidiary,
  counterpartyDetail,
  removeReview,
  saveReview,
} from '../../../counterparties/review';
import { listReviews } from '../../../counterparties/store';
import { REVIEW_VALUES, type ReviewValue } from '../../../counterparties/types';
import { isCountryCode } from '../../../lib/countries';
import { ValidationError } from '../../../lib/errors';
import type { Logger } from '../../../lib/logger';
import type { NetworkClient } from '../../../network/client';
import { startCounterpartyReviewSync } from '../../counterparties/sync';
import { principalOf } from '../auth/plugin';
import { access } from '../auth/roles';
import { pageAnswer, paging } from './lists';

export interface CounterpartyRouteDeps {
  pool: Pool;
  group: GroupConfig;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  /** The network the reviews are published at; absent, they wait for the reconciliation. */
  network?: NetworkClient;
}

const Nullable = Type.Union([Type.String(), Type.Null()]);
const Review = Type.Object({
  vaspDid: Type.String(),
  subsidiaryDid: Type.Union([Type.String(), Type.Null()], { description: "null: the group's review" }),
  reviewValue: Type.String(),
  note: Type.String(),
  reviewedBy: Type.String({ description: 'The reviewer by a stable id, as the audit log records it' }),
  reviewedAt: Type.String(),
  dueAt: Nullable,
  jurisdiction: Type.Union([Type.String(), Type.Null()], {
    description: "The counterparty's incorporation country (ISO 3166-1 alpha-2)",
  }),
});
const Effective = Type.Object({
  subsidiaryDid: Type.String(),
  vaspDid: Type.String(),
  reviewValue: Type.String({ description: 'TRUSTED, BLOCKED, MANUAL or UNREVIEWED' }),
  source: Type.String({ description: 'subsidiary (its override), group, or none' }),
  review: Type.Optional(Review),
});
const VaspParams = Type.Object({ vaspDID: Type.String({ maxLength: 300 }) });

const ListQuery = Type.Object(
  {
    reviewValue: Type.Optional(Type.String({ maxLength: 20, description: REVIEW_VALUES.join(', ') })),
    dueBefore: Type.Optional(
      Type.String({ maxLength: 40, description: 'reviews due again before this ISO 8601 date or date-time' }),
    ),
    jurisdiction: Type.Optional(Type.String({ maxLength: 10, description: 'ISO 3166-1 alpha-2' })),
    subsidiaryDid: Type.Optional(
      Type.String({
        maxLength: 300,
        description:
          "the reviews that apply to this subsidiary: its overrides and the group's rows it does not override",
      }),
    ),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'rows per page, 1 to 200 (default 50)' })),
    cursor: Type.Optional(Type.String({ maxLength: 1024, description: 'nextCursor of the previous page, unchanged' })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  },
  { additionalProperties: false },
);

const PutBody = Type.Object(
  {
    reviewValue: Type.String({ maxLength: 20, description: REVIEW_VALUES.join(', ') }),
    note: Type.String({ description: 'at most 2000 characters' }),
    dueAt: Type.Optional(
      Type.Union([Type.String({ maxLength: 40 }), Type.Null()], {
        description: 'when the review must be done again (ISO 8601, in the future)',
      }),
    ),
    subsidiaryDid: Type.Optional(
      Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
        description: "the subsidiary whose override this is; absent: the group's review",
      }),
    ),
    jurisdiction: Type.Optional(
      Type.Union([Type.String({ maxLength: 10 }), Type.Null()], {
        description: "the counterparty's incorporation country (ISO 3166-1 alpha-2)",
      }),
    ),
  },
  { additionalProperties: false },
);

function dueBefore(raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw);
  const at = ok ? new Date(raw) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new ValidationError(
      'querystring.dueBefore',
      'must be an ISO 8601 date (2027-01-31) or date-time with a zone',
    );
  return at;
}

function listFilter(group: GroupConfig, q: Static<typeof ListQuery>) {
  if (q.reviewValue !== undefined && !(REVIEW_VALUES as readonly string[]).includes(q.reviewValue))
    throw new ValidationError('querystring.reviewValue', `must be one of ${REVIEW_VALUES.join(', ')}`);
  if (q.jurisdiction !== undefined && !isCountryCode(q.jurisdiction))
    throw new ValidationError('querystring.jurisdiction', 'must be an ISO 3166-1 alpha-2 country code (DE, SG)');
  const subsidiaryDid = checkSubsidiary(group, q.subsidiaryDid, 'querystring.subsidiaryDid') ?? undefined;
  return {
    ...(q.reviewValue ? { reviewValue: q.reviewValue as ReviewValue } : {}),
    ...(q.jurisdiction ? { jurisdiction: q.jurisdiction } : {}),
    ...(subsidiaryDid ? { subsidiaryDid } : {}),
    ...(q.dueBefore !== undefined ? { dueBefore: dueBefore(q.dueBefore) } : {}),
  };
}

export function counterpartyRoutes(app: FastifyInstance, deps: CounterpartyRouteDeps) {
  /** After the answer: publish what the write made due (counterparties/push.ts). */
  const pushSoon = (vaspDid: string) => {
    const network = deps.network;
    if (network) setImmediate(() => void publishAfterWrite({ pool: deps.pool, network, logger: deps.logger }, vaspDid));
  };

  app.get(
    '/v1/counterparties',
    {
      config: { roles: access.read },
      schema: {
        tags: ['counterparties'],
        summary: 'Counterparty reviews, filtered, newest review first (or oldest), a page at a time',
        description:
          "Without `subsidiaryDid`: every row (the group's and the subsidiaries' overrides). With it: the reviews that " +
          'apply to that subsidiary. Filters combine with AND; a bad one answers 400 naming it.',
        querystring: ListQuery,
        response: {
          200: Type.Object({
            data: Type.Array(Review),
            nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof ListQuery>;
      const found = await listReviews(deps.pool, listFilter(deps.group, q), paging(q));
      return pageAnswer(found);
    },
  );

  app.get(
    '/v1/counterparties/:vaspDID',
    {
      config: { roles: access.read },
      schema: {
        tags: ['counterparties'],
        summary:
          "One counterparty: the group's review, the subsidiaries' overrides, and what applies to each subsidiary",
        description: 'A counterparty nobody reviewed answers 200 with UNREVIEWED for every subsidiary.',
        params: VaspParams,
        response: {
          200: Type.Object({
            vaspDid: Type.String(),
            group: Type.Union([Review, Type.Null()]),
            overrides: Type.Array(Review),
            effective: Type.Array(Effective),
          }),
        },
      },
    },
    async (request) => counterpartyDetail(deps.pool, deps.group, (request.params as Static<typeof VaspParams>).vaspDID),
  );

  app.put(
    '/v1/counterparties/:vaspDID',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['counterparties'],
        summary: "Review a counterparty for the group, or for one subsidiary (its override wins over the group's)",
        description:
          'The reviewer is the caller. Audited; published at the network after the answer, by the gateway for the ' +
          "group's review and by each subsidiary for the review that applies to it.",
        params: VaspParams,
        body: PutBody,
        response: { 200: Review },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const { review, pushDue } = await saveReview(
        deps.pool,
        deps.group,
        vaspDID,
        request.body as Static<typeof PutBody>,
        principalOf(request),
      );
      if (pushDue || review.jurisdiction === null) pushSoon(vaspDID);
      return review;
    },
  );

  app.delete(
    '/v1/counterparties/:vaspDID',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['counterparties'],
        summary: "Delete the group's review of a counterparty, or one subsidiary's override",
        description:
          'The network keeps a review it was given (it has no delete): the reconciliation reports it until it is reviewed again.',
        params: VaspParams,
        querystring: Type.Object(
          { subsidiaryDid: Type.Optional(Type.String({ maxLength: 300 })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deleted: Review }) },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const { subsidiaryDid } = request.query as { subsidiaryDid?: string };
      const { deleted, pushDue } = await removeReview(
        deps.pool,
        deps.group,
        vaspDID,
        subsidiaryDid === undefined ? undefined : (checkDid(subsidiaryDid, 'querystring.subsidiaryDid'), subsidiaryDid),
        principalOf(request),
      );
      if (pushDue) pushSoon(vaspDID);
      return { deleted };
    },
  );

  app.post(
    '/v1/counterparties/sync',
    {
      config: { roles: access.compliance },
      schema: {
        tags: ['counterparties'],
        summary: "Reconcile the reviews with the network's now: push what is pending, report the differences",
        description: 'Starts the nightly reconciliation workflow on demand (audited); 409 while one runs.',
        response: { 202: Type.Object({ workflowId: Type.String(), runId: Type.String() }) },
      },
    },
    async (request, reply) => {
      const started = await startCounterpartyReviewSync(
        { temporal: deps.temporal, pool: deps.pool, taskQueue: deps.taskQueue, group: deps.group },
        principalOf(request),
        request.log,
      );
      return reply.code(202).send(started);
    },
  );
}
