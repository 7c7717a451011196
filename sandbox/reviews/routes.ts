/**
 * Counterparty reviews (`POST /tf/vasps/{vaspDID}/review`, TrustFrameworkMarkVaspReviewRequest/Response): a VASP marks
 * another TRUSTED, BLOCKED or MANUAL; `GET /tf/simple/vasps?reviewedByVaspDID=&reviewValue=` (sandbox/directory) lists
 * them. The caller must be allowed to update the reviewing VASP.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { badRequest, notFound } from '../errors';
import { Did, DID_PATTERN, documented } from '../openapi';
import { putVaspReview } from './store';

export const REVIEW_VALUES = ['TRUSTED', 'BLOCKED', 'MANUAL'] as const;
const MAX_NOTE = 2000;

const ReviewBody = Type.Object({
  reviewedVaspDID: Did,
  reviewValue: Type.Union(REVIEW_VALUES.map((v) => Type.Literal(v))),
  note: Type.Optional(Type.String({ maxLength: MAX_NOTE })),
});
const ReviewParams = Type.Object({ vaspDID: Did });

const isDid = (v: unknown): v is string => typeof v === 'string' && v.length <= 1024 && new RegExp(DID_PATTERN).test(v);

export function reviewRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  api.post('/tf/vasps/:vaspDID/review', documented({ params: ReviewParams, body: ReviewBody }), async (request) => {
    const { vaspDID } = request.params as { vaspDID: string };
    if (!isDid(vaspDID)) throw badRequest('ValidationError', 'vaspDID: must be a DID');
    const body = request.body as Record<string, unknown> | null;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw badRequest('ValidationError', 'body: must be an object');
    if (!isDid(body.reviewedVaspDID)) throw badRequest('ValidationError', 'reviewedVaspDID: must be a DID');
    if (!(REVIEW_VALUES as readonly unknown[]).includes(body.reviewValue))
      throw badRequest('ValidationError', `reviewValue: must be one of ${REVIEW_VALUES.join(', ')}`);
    if (body.note !== undefined && (typeof body.note !== 'string' || body.note.length > MAX_NOTE))
      throw badRequest('ValidationError', `note: must be a string of at most ${MAX_NOTE} characters`);
    const access = accessOf(request);
    access.require(vaspDID, 'trustframework.updateVASP');
    if (!access.exists(body.reviewedVaspDID)) throw notFound(`VASP ${body.reviewedVaspDID} not found`);
    if (body.reviewedVaspDID === vaspDID)
      throw badRequest('ValidationError', 'reviewedVaspDID: a VASP cannot review itself');
    return putVaspReview(ctx.pool, {
      vaspDid: vaspDID,
      reviewedVaspDid: body.reviewedVaspDID,
      reviewValue: body.reviewValue as string,
      ...(typeof body.note === 'string' ? { note: body.note } : {}),
      createdBy: access.userDid,
    });
  });
}
