import pino, { type Logger } from 'pino';

/**
 * Paths that may carry secrets or personal data. pino replaces them before a line is written, so a careless
 * `log.info({ body })` cannot leak a private key, a client secret, a token or an IVMS101 record.
 */
export const REDACTED_PATHS = [
  'privateKeyHex',
  '*.privateKeyHex',
  '*.*.privateKeyHex',
  'keys[*].privateKeyHex',
  '*.keys[*].privateKeyHex',
  'clientSecret',
  '*.clientSecret',
  'client_secret',
  '*.client_secret',
  'access_token',
  '*.access_token',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers["x-notabene-signature"]',
  'ivms101',
  '*.ivms101',
  'originator',
  '*.originator',
  'beneficiary',
  '*.beneficiary',
  'pii',
  '*.pii',
];

/** `level` is the config's `logLevel` (LOG_LEVEL). */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}

export type { Logger };
