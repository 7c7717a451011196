import type { Pool } from 'pg';

export interface WebhookClaim {
  webhookId: string;
  endpoint: string;
  messageType: string | null;
  transactionId: string;
  transactionRef: string | null;
  status: string;
  originatorVaspDid: string | null;
  beneficiaryVaspDid: string | null;
}

/**
 * Claims a delivery id for processing. True when this request owns it: a new id, or one whose earlier claim is still
 * `processing` after `staleAfterSeconds` (the process that held it died between claim and hand-over, so nobody else
 * will finish it). False for a delivery already handled or being handled right now.
 */
export async function claimWebhook(pool: Pool, claim: WebhookClaim, staleAfterSeconds: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `insert into received_webhooks (webhook_id, endpoint, message_type, transaction_id, transaction_ref, status,
       originator_vasp_did, beneficiary_vasp_did, outcome)
     values ($1, $2, $3, $4, $5, $6, $7, $8, 'processing')
     on conflict (webhook_id) do update set received_at = now()
       where received_webhooks.outcome = 'processing' and received_webhooks.received_at < now() - make_interval(secs => $9)`,
    [
      claim.webhookId,
      claim.endpoint,
      claim.messageType,
      claim.transactionId,
      claim.transactionRef,
      claim.status,
      claim.originatorVaspDid,
      claim.beneficiaryVaspDid,
      staleAfterSeconds,
    ],
  );
  return rowCount === 1;
}

/** Gives a claim up so the network's next delivery of the same id is processed. */
export async function releaseWebhook(pool: Pool, webhookId: string): Promise<void> {
  await pool.query('delete from received_webhooks where webhook_id = $1', [webhookId]);
}

export async function recordWebhookOutcome(pool: Pool, webhookId: string, outcome: string): Promise<void> {
  await pool.query('update received_webhooks set outcome = $2 where webhook_id = $1', [webhookId, outcome]);
}
