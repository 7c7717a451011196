import { ValidationError } from '../../lib/errors';

/** The ValidationError `fn` throws, to read its field and rule; fails the test when it throws nothing or another error. */
export function thrownValidationError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return e;
    throw e;
  }
  throw new Error('expected a ValidationError');
}
