import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The address webhook's signature (network-api-facts.md §6c): the network calls `GET <url>?<params>&asset=…&address=…`
 * with header `x-notabene-signature` = base64 HMAC-SHA1(secret, "GET" + the request's path and query, exactly as
 * sent). The public samples leave the canonical string ambiguous; this is the one the sandbox and the receiver share.
 */
export const ADDRESS_SIGNATURE_HEADER = 'x-notabene-signature';

export function signAddressQuery(secret: string, method: string, pathAndQuery: string): string {
  return createHmac('sha1', secret).update(`${method.toUpperCase()}${pathAndQuery}`).digest('base64');
}

export function verifyAddressQuery(secret: string, method: string, pathAndQuery: string, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signAddressQuery(secret, method, pathAndQuery));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
