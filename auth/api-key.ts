import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys for services: `tro_<16 hex>_<43 base64url>`. The part before the second underscore is the public prefix
 * that names the key in logs, lists and the audit log; the rest is 256 random bits shown once. Only SHA-256 of the
 * whole key is stored: a slow password hash protects guessable secrets, and a 256-bit random secret cannot be guessed,
 * so a fast hash keeps the per-request check cheap without making a leaked table any more useful.
 */
export const API_KEY_MARKER = 'tro_';
const FORMAT = /^(tro_[0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface NewApiKey {
  /** The whole key, to hand to the service once. */
  key: string;
  /** Public: `tro_` and 16 hex digits. */
  prefix: string;
  secretSha256: Buffer;
}

export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

export function newApiKey(): NewApiKey {
  const prefix = `${API_KEY_MARKER}${randomBytes(8).toString('hex')}`;
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, secretSha256: hashApiKey(key) };
}

/** The prefix and hash of a presented key, or undefined when it does not have the shape of one. */
export function parseApiKey(presented: string): { prefix: string; secretSha256: Buffer } | undefined {
  const m = FORMAT.exec(presented);
  return m ? { prefix: m[1]!, secretSha256: hashApiKey(presented) } : undefined;
}

export const looksLikeApiKey = (token: string) => token.startsWith(API_KEY_MARKER);
