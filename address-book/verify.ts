import { withHeartbeat } from '../lib/heartbeat';
import { recordRejections, setNetworkAfter, setRunPhase } from './store/runs';
import { unconfirmedChanges } from './store/staging';
import { withTransaction } from '../db/transaction';
import { networkTotal } from '../network/address-book';
import type { AddressBookDeps } from './deps';
import { listInto } from './listing';

/**
 * Checks a run's result. When the expected count was reached and the settings allow, the listing's total is the
 * proof; otherwise the whole listing is staged again and every row of the delta checked: an addition missing (or
 * listed with another customerRef) and a removal still listed become rejected rows with their reason.
 */
export async function verifyRun(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string; countReached: boolean; verify: 'count' | 'listing' },
): Promise<{ verifiedBy: 'count' | 'listing'; networkAfter: number; missing: number; stillListed: number }> {
  const { pool, network } = deps;
  await setRunPhase(pool, input.runId, 'verifying');
  if (input.countReached && input.verify === 'count') {
    const networkAfter = await networkTotal(network, input.vaspDid);
    await setNetworkAfter(pool, input.runId, networkAfter);
    return { verifiedBy: 'count', networkAfter, missing: 0, stillListed: 0 };
  }
  const listed = await listInto(deps, input.runId, input.vaspDid, 'after');
  return withHeartbeat(deps.heartbeat, 'verify', () =>
    withTransaction(pool, async (c) => {
      // Rows already rejected (by registerCustomer or a refused deletion) keep their first reason.
      const { missing, stillListed } = await unconfirmedChanges(c, input.runId);
      await recordRejections(
        c,
        input.runId,
        [
          ...missing.map((m) => ({
            action: 'add' as const,
            address: m.address,
            asset: m.asset,
            customerRef: m.customer_ref,
            reason:
              m.listed_ref === null
                ? "not in the network's listing after processing (the network reports per-row outcomes only by e-mail)"
                : `listed with customerRef "${m.listed_ref}" after processing`,
          })),
          ...stillListed.map((m) => ({
            action: 'remove' as const,
            address: m.address,
            reason: "still in the network's listing after deletion",
          })),
        ],
        deps.settings.maxStoredRejections,
      );
      return {
        verifiedBy: 'listing' as const,
        networkAfter: listed.total,
        missing: missing.length,
        stillListed: stillListed.length,
      };
    }),
  );
}
