/**
 * The signature of the network's notification webhooks, shared by the sender (sandbox/webhooks) and the receiver (the
 * orchestrator's webhook endpoint). The network signs with Svix; this is Svix's scheme, also
 * published as "Standard Webhooks":
 *
 * - Secret: per endpoint, `whsec_` + base64 of 32 random bytes, answered once by `POST /webhook`. The HMAC key is the
 *   base64-decoded part after the prefix (a secret without the prefix is taken as base64 as well).
 * - Headers on every delivery (both spellings, same values):
 *   - `webhook-id` / `svix-id`: the message id (`msg_…`), the same on every retry of one delivery — de-duplicate on it;
 *   - `webhook-timestamp` / `svix-timestamp`: Unix time in seconds of this attempt;
 *   - `webhook-signature` / `svix-signature`: `v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>`, where
 *     `body` is the raw request body exactly as sent (UTF-8 JSON). Several space-separated signatures may appear
 *     (secret rotation): one valid `v1` signature is enough.
 * - The receiver must verify against the raw body bytes (not re-serialised JSON), compare in constant time, and refuse
 *   timestamps more than 5 minutes away from its clock (replays).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** Whether `secret` can verify signatures: its key (base64, after an optional `whsec_`) has at least 16 bytes. */
export function isUsableWebhookSecret(secret: string): boolean {
  try {
    keyOf(secret);
    return true;
  } catch {
    return false;
  }
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 16) throw new Error('webhook secret is too short or not base64');
  return key;
}

/**
 * The `v1,<base64>` signature of one message. A body given as bytes is signed as those bytes, never as text decoded
 * from them: decoding would map different invalid UTF-8 sequences to the same replacement characters.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery attempt, both the `webhook-*` and the `svix-*` spelling. */
export function webhookHeaders(
  secret: string,
  id: string,
  body: string | Uint8Array,
  nowSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const signature = signWebhook(secret, id, nowSeconds, body);
  const timestamp = String(nowSeconds);
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
    'svix-id': id,
    'svix-timestamp': timestamp,
    'svix-signature': signature,
  };
}

/** Node's `IncomingHttpHeaders` (lower-case names), a plain record, or a fetch `Headers`. */
export type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const v = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

export type WebhookCheck = { ok: true; id: string; timestamp: number } | { ok: false; reason: string };

/** Verifies a delivery and says why it fails. `nowSeconds` is for tests. */
export function checkWebhookSignature(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): WebhookCheck {
  const id = header(headers, 'webhook-id') ?? header(headers, 'svix-id');
  const ts = header(headers, 'webhook-timestamp') ?? header(headers, 'svix-timestamp');
  const signatures = header(headers, 'webhook-signature') ?? header(headers, 'svix-signature');
  if (!id || !ts || !signatures)
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature header' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'webhook-timestamp is not a Unix time in seconds' };
  const timestamp = Number(ts);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'webhook-timestamp is outside the tolerance window' };
  }
  let expected: Buffer;
  try {
    expected = Buffer.from(signWebhook(secret, id, timestamp, rawBody).slice(3), 'base64');
  } catch {
    return { ok: false, reason: 'the webhook secret is not usable' };
  }
  for (const candidate of signatures.split(' ')) {
    const [version, mac] = candidate.split(',', 2);
    if (version !== 'v1' || !mac) continue;
    const given = Buffer.from(mac, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: 'no valid v1 signature' };
}

/** True only for an authentic, fresh delivery. */
export function verifyWebhookSignature(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  return checkWebhookSignature(secret, headers, rawBody, opts).ok;
}
