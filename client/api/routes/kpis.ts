/**
 * The compliance KPIs over the transfer projection (transfer-view/kpis-store.ts), with their definitions in the
 * OpenAPI document: the console's dashboard and the reports to a board or regulator read the same figures.
 */
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { computeKpis, EXACT_PERCENTILES_UP_TO } from '../../../transfer-view/kpis-store';
import { ValidationError } from '../../../lib/errors';
import { access } from '../auth/roles';

const DAY_MS = 86_400_000;
/** A range longer than this is refused: the dashboard's series and the query's cost stay bounded. */
const MAX_RANGE_DAYS = 400;
/** Hourly series cover at most this many days (744 points). */
const MAX_HOUR_RANGE_DAYS = 31;

export const KPI_DEFINITIONS = `Counted over the transfers created in [from, to) (default: the last 30 days), of one group VASP
(subsidiary) and one direction when given, from the transfer projection.
- **Response rate** = transfers answered (the network's ACK, ACCEPTED, DECLINED, REJECTED or NOT_READY reached at least
  once; outgoing: by the counterparty, incoming: by us) ÷ transfers sent (those with a transaction at the network).
- **Success rate** = transfers ACCEPTED ÷ all transfers.
- **Identification rate** = transfers whose counterparty VASP is known ÷ all transfers.
- **Automation rate** = transfers decided without a person (the policy or screening) ÷ transfers decided (by the
  policy, screening or a person; transfers still waiting are in neither).
- **Answer time**: median and 95th percentile of the time from a transfer's creation to its first answer, in seconds.
  Exact up to ${EXACT_PERCENTILES_UP_TO.toLocaleString('en')} answered transfers in the range; above, estimated from
  per-day histograms of the answer times (buckets a quarter power of two wide, about 19 %, interpolated within the
  bucket), and \`answerSeconds.estimated\` is true.
- **By status**: transfers by their current status; **by type**: transfers by asset.
- **Series**: the same counts and rates per UTC day, or per UTC hour with \`bucket=hour\` (a range of at most
  ${MAX_HOUR_RANGE_DAYS} days), for each bucket that has transfers, oldest first: \`start\` is the bucket's first instant,
  \`day\` its UTC date. A rate over no transfers is null.`;

const Day = Type.String({
  maxLength: 40,
  description: 'An ISO 8601 date or date-time, e.g. 2026-11-24 or 2026-11-24T10:00:00Z',
});
const KpiQuery = Type.Object(
  {
    from: Type.Optional(Day),
    to: Type.Optional(Day),
    subsidiary: Type.Optional(Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 200 })),
    direction: Type.Optional(Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')])),
    bucket: Type.Optional(
      Type.Union([Type.Literal('day'), Type.Literal('hour')], { description: "The series' buckets (default: day)" }),
    ),
  },
  { additionalProperties: false },
);
const Rate = Type.Union([Type.Number(), Type.Null()]);
const Counts = {
  total: Type.Integer(),
  sent: Type.Integer(),
  answered: Type.Integer(),
  accepted: Type.Integer(),
  identified: Type.Integer(),
  decided: Type.Integer(),
  automated: Type.Integer(),
};
const Rates = {
  responseRate: Rate,
  successRate: Rate,
  identificationRate: Rate,
  automationRate: Rate,
};
const KpiResponse = Type.Object({
  from: Type.String(),
  to: Type.String(),
  ...Rates,
  counts: Type.Object(Counts),
  answerSeconds: Type.Object({ median: Rate, p95: Rate, estimated: Type.Boolean() }),
  byStatus: Type.Record(Type.String(), Type.Integer()),
  byType: Type.Record(Type.String(), Type.Integer()),
  series: Type.Array(Type.Object({ start: Type.String(), day: Type.String(), ...Counts, ...Rates })),
});

function time(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw new ValidationError(`querystring.${field}`, 'must be an ISO 8601 date or date-time');
  return new Date(t);
}

export function kpiRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  app.get(
    '/v1/kpis',
    {
      config: { roles: access.read },
      schema: {
        tags: ['console'],
        summary: 'The compliance KPIs: response, success, identification and automation rates, answer times',
        description: KPI_DEFINITIONS,
        querystring: KpiQuery,
        response: { 200: KpiResponse },
      },
    },
    async (request) => {
      const q = request.query as Static<typeof KpiQuery>;
      const to = time(q.to, 'to') ?? new Date();
      const from = time(q.from, 'from') ?? new Date(to.getTime() - 30 * DAY_MS);
      if (from >= to) throw new ValidationError('querystring.to', 'must be later than from');
      if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
        throw new ValidationError('querystring.from', `must be at most ${MAX_RANGE_DAYS} days before to`);
      }
      if (q.bucket === 'hour' && to.getTime() - from.getTime() > MAX_HOUR_RANGE_DAYS * DAY_MS) {
        throw new ValidationError('querystring.bucket', `hour needs a range of at most ${MAX_HOUR_RANGE_DAYS} days`);
      }
      const kpis = await computeKpis(deps.pool, {
        from,
        to,
        subsidiaryDid: q.subsidiary,
        direction: q.direction,
        bucket: q.bucket,
      });
      return { from: from.toISOString(), to: to.toISOString(), ...kpis };
    },
  );
}
