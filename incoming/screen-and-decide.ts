/**
 * Screening and the policy's decision in one step: the decision needs screening's result and the originator's
 * country, which never leave this process; the workflow gets the hits and the decision.
 */
import { decideTransfer, type DecideDeps } from '../policy/decide';
import type { TransferFactsInput } from '../policy/types';
import { screenIncoming, type ScreeningDeps, type ScreeningInput } from '../screening/screen-transfer';
import type { ScreenedTransfer } from './types';

export async function screenAndDecide(
  deps: ScreeningDeps & { decide?: DecideDeps },
  input: ScreeningInput & { transfer?: TransferFactsInput },
): Promise<ScreenedTransfer> {
  const { outcome, customerCountry } = await screenIncoming(deps, input);
  // Started by a workflow from before policies (no transfer facts), or a worker without them: screening alone.
  if (!input.transfer || !deps.decide) return outcome;
  const unreadable = outcome.skipped === 'undecryptable' || outcome.skipped === 'unreadable';
  const policy = await decideTransfer(deps.decide, input.transfer, {
    sanctionsHit: outcome.nameHits.length > 0 || outcome.addressHits.length > 0,
    personalDataReadable: !unreadable,
    customerJurisdiction: customerCountry,
  });
  return { ...outcome, policy };
}
