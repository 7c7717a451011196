/**
 * The project's error vocabulary. Every error that crosses a boundary (HTTP response, activity failure, CLI exit) is
 * one of these classes, and each class maps to exactly one HTTP status and one Temporal retry decision, so the API,
 * the activities and the workflows agree on what a failure means.
 *
 * Messages must never contain secrets (private keys, client secrets, tokens) or personal data: they end up in logs,
 * HTTP bodies and workflow history.
 */
export interface ErrorDetails {
  /** Dotted path of the offending input field, e.g. `originator.originatorPersons[0].naturalPerson`. */
  field?: string;
  /** The rule that failed, in words a caller can act on, e.g. `must be a did:key with an Ed25519 public key`. */
  rule?: string;
  /** Extra machine-readable context. Must be free of secrets and personal data. */
  [key: string]: unknown;
}

export abstract class AppError extends Error {
  abstract readonly httpStatus: number;
  /** Whether Temporal should retry an activity that failed with this error. */
  abstract readonly retryable: boolean;
  readonly details: ErrorDetails;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }

  /** The body the internal API answers with. */
  toJSON(): { error: { type: string; message: string } & ErrorDetails } {
    return { error: { type: this.name, message: this.message, ...this.details } };
  }
}

/** Input that breaks a rule. Retrying the same input cannot help. */
export class ValidationError extends AppError {
  readonly httpStatus = 400;
  readonly retryable = false;
  constructor(field: string, rule: string, details: Omit<ErrorDetails, 'field' | 'rule'> = {}) {
    super(`${field}: ${rule}`, { ...details, field, rule });
  }
}

/** Data that cannot be decrypted or verified (tampered, wrong key, wrong format). */
export class CryptoError extends AppError {
  readonly httpStatus = 400;
  readonly retryable = false;
}

export class AuthenticationError extends AppError {
  readonly httpStatus = 401;
  readonly retryable = false;
}

export class ForbiddenError extends AppError {
  readonly httpStatus = 403;
  readonly retryable = false;
}

export class NotFoundError extends AppError {
  readonly httpStatus = 404;
  readonly retryable = false;
}

/** The request conflicts with the current state (wrong status for an action, a duplicate). */
export class ConflictError extends AppError {
  readonly httpStatus = 409;
  readonly retryable = false;
}

/** The record existed but its content was erased on purpose (data retention): it will never be readable again. */
export class GoneError extends AppError {
  readonly httpStatus = 410;
  readonly retryable = false;
}

/** The same idempotency key is still being processed elsewhere: try again shortly. */
export class InFlightError extends AppError {
  readonly httpStatus = 409;
  readonly retryable = true;
}

/**
 * Too many requests from one client to this API (its own rate limits): wait `retryAfterSeconds`, sent as
 * `Retry-After` too. Not the network's limit on us, which is RateLimitedError.
 */
export class TooManyRequestsError extends AppError {
  readonly httpStatus = 429;
  readonly retryable = true;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryAfterSeconds });
  }
}

/** The network (or another upstream) refused the request for good: a 4xx other than 408/409-in-flight/429. */
export class UpstreamRejectedError extends AppError {
  readonly httpStatus = 502;
  readonly retryable = false;
}

/** The network is unreachable, rate-limits us or fails with 5xx: worth retrying with backoff. */
export class UpstreamUnavailableError extends AppError {
  readonly httpStatus = 503;
  readonly retryable = true;
}

/**
 * The network's rate limit: its 429 (every endpoint blocked for a while), or the group's shared budget
 * (network/rate-budget.ts) unable to let a call through within its bound. Retried after `details.retryAfterMs`.
 */
export class RateLimitedError extends UpstreamUnavailableError {
  constructor(message: string, details: ErrorDetails & { retryAfterMs: number }) {
    super(message, details);
  }

  get retryAfterMs(): number {
    return Number(this.details.retryAfterMs);
  }
}

/**
 * The audit log could not record something that may only happen recorded (a read of personal data): it was not done.
 * Worth retrying once the database answers again.
 */
export class AuditUnavailableError extends AppError {
  readonly httpStatus = 503;
  readonly retryable = true;
}

/** Start-up configuration is wrong. Printed as one line naming the setting and the fix. */
export class ConfigError extends AppError {
  readonly httpStatus = 500;
  readonly retryable = false;
  constructor(
    readonly setting: string,
    problem: string,
    readonly fix: string,
  ) {
    super(`${setting}: ${problem}. ${fix}`, { setting });
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
