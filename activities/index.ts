import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { AddressBookConfig } from '../address-book/config';
import type { Keystore } from '../keys';
import type { Logger } from '../lib/logger';
import type { NetworkClient } from '../network/client';
import type { TransferContext } from '../outgoing/context';
import { decryptTransaction } from '../outgoing/personal-data';
import type { DecideDeps } from '../policy/decide';
import { createDecideDeps } from '../policy/sources';
import type { PolicyConfig } from '../policy/config';
import { fiatOf } from '../policy/sources';
import type { Pricing } from '../pricing';
import type { ReviewLookup } from '../counterparties/review-cache';
import { addressBookActivities } from './address-book';
import { connectivityActivities } from './connectivity';
import { counterpartyActivities } from './counterparties';
import { custodyActivities } from './custody';
import { depositActivities } from './deposits';
import { withFailureMapping } from './failures';
import { incomingActivities, incomingSweepActivities } from './incoming-transfers';
import { keyRotationActivities } from './key-rotation';
import { transferActivities } from './outgoing-transfers';
import { retentionActivities } from './retention';
import { transferViewActivities } from './transfer-view';
import { walletProofActivities } from './wallet-proofs';

export interface ActivityDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  /** The VASPs' own keys (keys): activities hand out key ids and public keys only. */
  keystore: Keystore;
  /** Address-book reconciliation settings (config/index.ts, `addressBook`). */
  addressBook: AddressBookConfig;
  /** The worker's Temporal client: a VERIFIED wallet proof signals the transfers waiting for it. */
  temporal?: Pick<Client, 'workflow'>;
  /** A workflow's status by Temporal ('NOT_FOUND' when it has none): the address book releases abandoned run locks. */
  workflowStatus?: (workflowId: string) => Promise<string>;
  /** Outgoing transfers (keystore, sealed request store, settings); outgoing/context.ts. */
  transfers?: TransferContext;
  /** Decisions by policy (config `policy`); off: screening alone decides, as before policies. */
  policy?: PolicyConfig;
  /** The counterparties' reviews in memory (counterparties/review-cache.ts), started and stopped by the worker. */
  reviews?: ReviewLookup;
  /** Prices for policies' amount rules (pricing/); without it an amount rule sends the transfer to a person. */
  pricing?: Pricing;
  /** Deposits' and outgoing transfers' custody callbacks (CUSTODY_CALLBACK_URL and its secret); absent: none are sent. */
  custody?: { url?: string; secret?: string };
}

/**
 * Builds every activity the worker registers. Workflows import this module's *type* only
 * (`proxyActivities<Activities>`), so none of the I/O below can leak into the workflow sandbox.
 */
export function createActivities(deps: ActivityDeps) {
  const decide = decideDeps(deps);
  return withFailureMapping({
    ...connectivityActivities(deps.network),
    ...transferActivities(deps.transfers, decide),
    ...keyRotationActivities(deps),
    ...addressBookActivities(deps),
    ...retentionActivities(deps),
    ...counterpartyActivities(deps),
    ...transferViewActivities(deps),
    ...incomingSweepActivities(deps),
    ...walletProofActivities(deps),
    ...depositActivities({ ...deps, gatewayDid: deps.transfers?.group.gatewayDid }),
    ...custodyActivities(deps),
    ...incomingActivities({
      pool: deps.pool,
      network: deps.network,
      logger: deps.logger,
      decide,
      decrypt: async (tx, vaspDid) =>
        deps.transfers ? ((await decryptTransaction(deps.transfers, tx as never, vaspDid)) as typeof tx) : tx,
      callbackUrl: deps.transfers?.config.callbackUrl,
    }),
  });
}

export type Activities = ReturnType<typeof createActivities>;

/** What the policy decides with; none without transfers (no network, no group): screening alone then. */
function decideDeps(deps: ActivityDeps): DecideDeps | undefined {
  const ctx = deps.transfers;
  if (!ctx || deps.policy?.decisions === false) return undefined;
  const gatewayDid = ctx.group.gatewayDid ?? ctx.group.subsidiaryDids[0];
  if (!gatewayDid) return undefined;
  return createDecideDeps({
    pool: deps.pool,
    network: deps.network,
    gatewayDid,
    directoryCacheMs: ctx.config.directoryCacheMs,
    ...(deps.pricing ? { toFiat: fiatOf(deps.pricing) } : {}),
    ...(deps.reviews ? { reviews: deps.reviews } : {}),
  });
}
