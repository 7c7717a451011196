import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError, RateLimitedError, ValidationError } from '../../lib/errors';
import { issueToValidationError, UNKNOWN_FIELD_RULE } from '../../lib/validation';

/** Fields that once named who acts: the API now takes that from the credentials, and says so. */
const WHO_ACTS = new Set(['actor', 'requestedBy']);

/**
 * One error shape for the whole internal API: `{error:{type, message, field?, rule?}}` with the status the error class
 * maps to. Schema violations name the field and the rule. Unexpected errors answer 500 without their message, which
 * could quote input.
 */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error.validation && error.validation.length > 0) {
    const issue = error.validation[0]!;
    const root = error.validationContext === 'body' ? '' : (error.validationContext ?? '');
    let e = issueToValidationError(issue as never, root);
    if (e.details.rule === UNKNOWN_FIELD_RULE && WHO_ACTS.has(String(e.details.field))) {
      e = new ValidationError(
        String(e.details.field),
        "is not accepted: the API records the authenticated caller (the token's or API key's name) as the one who acts",
      );
    }
    return reply.code(400).send(e.toJSON());
  }
  if (isAppError(error)) {
    if (error.httpStatus >= 500)
      request.log.warn({ err: { type: error.name, message: error.message } }, 'request failed');
    // A passing failure (the network unreachable or busy, the group's budget for its quota spent) tells the caller
    // when to repeat the request: the quota's own delay, else a second.
    if (error.httpStatus === 503 && error.retryable)
      reply.header(
        'retry-after',
        String(error instanceof RateLimitedError ? Math.max(1, Math.ceil(error.retryAfterMs / 1000)) : 1),
      );
    return reply.code(error.httpStatus).send(error.toJSON());
  }
  if (error.statusCode && error.statusCode < 500) {
    const e = new ValidationError('(request)', error.message);
    return reply.code(error.statusCode).send({ error: { ...e.toJSON().error, type: error.code ?? 'BadRequest' } });
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply.code(500).send({ error: { type: 'InternalError', message: 'internal error; see the API log' } });
}
