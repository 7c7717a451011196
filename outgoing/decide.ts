/**
 * The outgoing policy's decision before a transfer is sent, with its audit row: APPROVE sends, REJECT refuses it, and
 * SEND_TO_INBOX or NOT_READY (which the network knows only from a beneficiary) hold it for a person.
 */
import { recordAuditEntry } from '../audit/store';
import { systemPrincipal } from '../lib/principal';
import { decideTransfer, type DecideDeps } from '../policy/decide';
import { policyAuditDetails } from '../policy/status';
import type { TransferDecision, TransferFactsInput } from '../policy/types';
import type { TransferContext } from './context';

export async function decideBeforeSending(
  ctx: Pick<TransferContext, 'pool'>,
  decide: DecideDeps,
  facts: TransferFactsInput,
): Promise<TransferDecision> {
  const verdict = await decideTransfer(decide, facts);
  const { decision } = verdict;
  // Without a policy, approving is what the system did before policies: no row for it, as before.
  if (decision.policy !== null || decision.action !== 'APPROVE') {
    await recordAuditEntry(
      ctx.pool,
      {
        actor: 'system:policy',
        action: `outgoing.policy.${decision.action.toLowerCase()}`,
        subject: facts.transferId,
        details: { ...policyAuditDetails(verdict), principal: systemPrincipal('policy') },
      },
      { idempotencyKey: `outgoing.policy:${facts.transferId}` },
    );
  }
  return verdict;
}
