import { createHmac, timingSafeEqual } from 'node:crypto';
import { WEBHOOK_TOLERANCE_SECONDS, type HeaderSource } from './webhook-signature';

/**
 * The address webhook's signature: the network calls `GET <url>?<params>&asset=…&address=…`
 * with header `x-notabene-signature` = base64 HMAC-SHA1(secret, "GET" + the request's path and query, exactly as
 * sent). The public samples leave the canonical string ambiguous; this is the one the sandbox and the receiver share.
 *
 * That format is the network's and has no timestamp, so a captured query verifies forever. This project's own
 * addition, which the sandbox sends beside it: `x-tro-timestamp` (Unix seconds) and `x-tro-signature` =
 * `v1,<base64 HMAC-SHA256(secret, "<timestamp>.GET<path and query>")>`; the receiver refuses one more than
 * WEBHOOK_TOLERANCE_SECONDS away from its clock.
 */
export const ADDRESS_SIGNATURE_HEADER = 'x-notabene-signature';
export const ADDRESS_TIMESTAMP_HEADER = 'x-tro-timestamp';
export const ADDRESS_TIMESTAMPED_SIGNATURE_HEADER = 'x-tro-signature';

export function signAddressQuery(secret: string, method: string, pathAndQuery: string): string {
  return createHmac('sha1', secret).update(`${method.toUpperCase()}${pathAndQuery}`).digest('base64');
}

export function verifyAddressQuery(
  secret: string,
  method: string,
  pathAndQuery: string,
  signature: string | undefined,
): boolean {
  if (!signature) return false;
  return sameText(signAddressQuery(secret, method, pathAndQuery), signature);
}

/** The timestamped signature (`v1,<base64>`) of one query at `timestamp`. */
export function signTimestampedAddressQuery(
  secret: string,
  method: string,
  pathAndQuery: string,
  timestamp: number,
): string {
  return `v1,${createHmac('sha256', secret).update(`${timestamp}.${method.toUpperCase()}${pathAndQuery}`).digest('base64')}`;
}

/** Every header of one query: the network's signature, and the timestamped one. */
export function addressQueryHeaders(
  secret: string,
  method: string,
  pathAndQuery: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    [ADDRESS_SIGNATURE_HEADER]: signAddressQuery(secret, method, pathAndQuery),
    [ADDRESS_TIMESTAMP_HEADER]: String(nowSeconds),
    [ADDRESS_TIMESTAMPED_SIGNATURE_HEADER]: signTimestampedAddressQuery(secret, method, pathAndQuery, nowSeconds),
  };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

export type AddressQueryCheck = { ok: true; timestamped: boolean } | { ok: false; reason: string };

/**
 * Verifies one query. A timestamped signature, when present, must verify and be fresh, whatever else the request
 * carries; without one, the network's signature is accepted only if `requireTimestamp` is off (a network that sends
 * only its own format).
 */
export function checkAddressQuery(
  secret: string,
  method: string,
  pathAndQuery: string,
  headers: HeaderSource,
  opts: { requireTimestamp: boolean; toleranceSeconds?: number; nowSeconds?: number },
): AddressQueryCheck {
  const timestampText = header(headers, ADDRESS_TIMESTAMP_HEADER);
  const timestamped = header(headers, ADDRESS_TIMESTAMPED_SIGNATURE_HEADER);
  if (timestampText !== undefined || timestamped !== undefined) {
    if (!timestampText || !/^\d{1,12}$/.test(timestampText) || !timestamped)
      return { ok: false, reason: 'timestamp or timestamped signature missing or malformed' };
    const timestamp = Number(timestampText);
    const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
    if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS))
      return { ok: false, reason: 'timestamp outside the allowed window (a replay, or a clock off)' };
    if (!sameText(signTimestampedAddressQuery(secret, method, pathAndQuery, timestamp), timestamped))
      return { ok: false, reason: 'timestamped signature does not verify' };
    return { ok: true, timestamped: true };
  }
  if (opts.requireTimestamp)
    return { ok: false, reason: 'no timestamped signature (ADDRESS_WEBHOOK_TIMESTAMP=required)' };
  return verifyAddressQuery(secret, method, pathAndQuery, header(headers, ADDRESS_SIGNATURE_HEADER))
    ? { ok: true, timestamped: false }
    : { ok: false, reason: 'signature does not verify' };
}
