import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../lib/errors';

/** What an `Idempotency-Key` may be; it becomes the id of what it names (a transfer, a wallet proof). */
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's `Idempotency-Key` header, checked (400 naming it). `required`: why the route needs one, said when it
 * is missing; without it the header is optional.
 */
export function idempotencyKeyOf(request: FastifyRequest, required?: string): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined || key === '') {
    if (required) throw new ValidationError('Idempotency-Key', `is required: ${required}`);
    return undefined;
  }
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
    throw new ValidationError('Idempotency-Key', 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -');
  return key;
}
