/**
 * The callbacks the custody system acts on (issue 23 item 4): `deposit.release` (it may credit the deposit) and
 * `deposit.return` (it must send the funds back to `to`). Signed the way the network signs its webhooks
 * (lib/webhook-signature.ts: webhook-id, webhook-timestamp, webhook-signature over the raw body), with one stable
 * webhook id per deposit and event so the receiver can de-duplicate retries. Anything but a 2xx throws a retryable
 * error: the workflow's activity retries with backoff until the custody system acknowledges.
 */
import type { Pool } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { UpstreamUnavailableError } from '../lib/errors';
import { webhookHeaders } from '../lib/webhook-signature';
import { depositOrNotFound } from './deposits';
import type { Deposit } from './types';

export type CustodyEvent = 'deposit.release' | 'deposit.return';

export interface CustodyCallbackDeps {
  pool: Pool;
  /** Unset: no callbacks (CUSTODY_CALLBACK_URL). */
  url?: string;
  secret?: string;
}

/** What the custody system is told. No personal data: the deposit's ids, addresses, amount and asset. */
export function custodyCallbackBody(d: Deposit, event: CustodyEvent): Record<string, unknown> {
  const common = {
    event,
    depositId: d.id,
    vaspDid: d.vaspDid,
    chain: d.chain,
    asset: d.asset,
    amount: d.amount,
    txHash: d.txHash,
    outputIndex: d.outputIndex,
    reason: d.reason,
    decidedBy: d.decidedBy,
    decidedAt: d.decidedAt,
  };
  // A return goes back to the address the deposit came from (null when the report did not name it).
  return event === 'deposit.return' ? { ...common, to: d.from, from: d.to } : { ...common, address: d.to };
}

export const custodyWebhookId = (depositId: string, event: CustodyEvent) =>
  `msg_${depositId}_${event === 'deposit.release' ? 'release' : 'return'}`;

/**
 * POSTs the event for the deposit and audits the acknowledgement (`deposit.callback-delivered`, once per activity by
 * its idempotency key). Answers `delivered: false` without a configured URL.
 */
export async function deliverCustodyCallback(
  deps: CustodyCallbackDeps,
  input: { id: string; event: CustodyEvent },
  idempotencyKey?: string,
): Promise<{ delivered: boolean }> {
  if (!deps.url || !deps.secret) return { delivered: false };
  const d = await depositOrNotFound(deps.pool, input.id);
  const body = JSON.stringify(custodyCallbackBody(d, input.event));
  const webhookId = custodyWebhookId(d.id, input.event);
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
      `the custody system could not be reached for ${input.event} of ${d.id}: ${(e as Error).name}`,
    );
  }
  if (status < 200 || status >= 300)
    throw new UpstreamUnavailableError(
      `the custody system answered ${status} to ${input.event} of ${d.id}: retried until it acknowledges`,
      { status },
    );
  await withTransaction(deps.pool, (tx) =>
    appendAuditEntry(
      tx,
      {
        actor: 'system:deposit',
        action: 'deposit.callback-delivered',
        subject: d.id,
        details: { event: input.event, webhookId, status },
      },
      { idempotencyKey },
    ),
  );
  return { delivered: true };
}
