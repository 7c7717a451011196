/**
 * One signed callback to the custody system: deposits' `deposit.release`/`deposit.return` (deposits/custody-callback.ts)
 * and outgoing transfers' `transfer.release`/`transfer.halt` (activities/custody.ts, bodies by outgoing/status.ts). Signed the way the
 * network signs its webhooks (lib/webhook-signature.ts: webhook-id, webhook-timestamp, webhook-signature over the raw
 * body), with one stable webhook id per subject and event so the receiver can de-duplicate retries. Anything but a 2xx
 * throws a retryable error: the workflow's activity retries with backoff until the custody system acknowledges.
 */
import type { Pool } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { UpstreamUnavailableError } from '../lib/errors';
import { webhookHeaders } from '../lib/webhook-signature';

export interface CustodyCallbackDeps {
  pool: Pool;
  /** Unset: no callbacks (CUSTODY_CALLBACK_URL). */
  url?: string;
  secret?: string;
}

export interface CustodyCallback {
  /** `deposit.release`, `transfer.halt`, …: also in the body. */
  event: string;
  /** The deposit's or transfer's id: the audit entry's subject. */
  subject: string;
  /** Stable per subject and event: retries carry the same id. */
  webhookId: string;
  /** What the custody system is told: ids, addresses, amount and asset; never personal data. */
  body: Record<string, unknown>;
  /** The audit entry's actor and action for the acknowledgement. */
  actor: string;
  auditAction: string;
}

/**
 * POSTs the callback and audits the acknowledgement (once per activity by its idempotency key). Answers
 * `delivered: false` without a configured URL.
 */
export async function deliverCustodyCallback(
  deps: CustodyCallbackDeps,
  callback: CustodyCallback,
  idempotencyKey?: string,
): Promise<{ delivered: boolean }> {
  if (!deps.url || !deps.secret) return { delivered: false };
  const { event, subject, webhookId } = callback;
  const body = JSON.stringify(callback.body);
  let status: number;
  try {
    const r = await fetch(deps.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...webhookHeaders(deps.secret, webhookId, body) },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await r.body?.cancel();
    status = r.status;
  } catch (e) {
    throw new UpstreamUnavailableError(
      `the custody system could not be reached for ${event} of ${subject}: ${(e as Error).name}`,
    );
  }
  if (status < 200 || status >= 300)
    throw new UpstreamUnavailableError(
      `the custody system answered ${status} to ${event} of ${subject}: retried until it acknowledges`,
      { status },
    );
  await withTransaction(deps.pool, (tx) =>
    appendAuditEntry(
      tx,
      { actor: callback.actor, action: callback.auditAction, subject, details: { event, webhookId, status } },
      { idempotencyKey },
    ),
  );
  return { delivered: true };
}
