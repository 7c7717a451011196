import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Moves failure messages and stack traces into an encoded payload, so they pass through the encrypting codec too:
 * an error that quotes a field must not sit in history in plaintext. Loaded by path (failureConverterPath) because
 * the worker also bundles it into the workflow sandbox.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
