import { ValidationError } from '../errors';

/**
 * The opaque cursor of a list endpoint: the sort key of the last row of a page (a timestamp in PostgreSQL's microsecond
 * text form and a unique id), base64url-encoded so that callers pass it back unchanged and never build one.
 */
export interface CursorKey {
  at: string;
  id: string;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.at, key.id]), 'utf8').toString('base64url');
}

/** Reads a cursor given by a caller; anything this API did not give out is a 400 naming `field`. */
export function decodeCursor(raw: string, field = 'querystring.cursor'): CursorKey {
  const bad = () => new ValidationError(field, 'is not a cursor this API gave out: pass back nextCursor unchanged');
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(raw)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string')
    throw bad();
  const [at, id] = parsed as [string, string];
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(at) || id.length === 0 || id.length > 300) throw bad();
  return { at, id };
}
