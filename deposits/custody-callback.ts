/**
 * A deposit's callbacks to the custody system: `deposit.release` (it may credit the deposit) and `deposit.return` (it
 * must send the funds back to `to`), signed, retried and audited by custody/callback.ts.
 */
import { deliverCustodyCallback, type CustodyCallbackDeps } from '../custody/callback';
import { depositOrNotFound } from './deposits';
import type { Deposit } from './types';

export type CustodyEvent = 'deposit.release' | 'deposit.return';

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

/** `deposit.release` or `deposit.return` for the deposit, signed and audited (custody/callback.ts). */
export async function deliverDepositCallback(
  deps: CustodyCallbackDeps,
  input: { id: string; event: CustodyEvent },
  idempotencyKey?: string,
): Promise<{ delivered: boolean }> {
  if (!deps.url || !deps.secret) return { delivered: false };
  const d = await depositOrNotFound(deps.pool, input.id);
  return deliverCustodyCallback(
    deps,
    {
      event: input.event,
      subject: d.id,
      webhookId: custodyWebhookId(d.id, input.event),
      body: custodyCallbackBody(d, input.event),
      actor: 'system:deposit',
      auditAction: 'deposit.callback-delivered',
    },
    idempotencyKey,
  );
}
