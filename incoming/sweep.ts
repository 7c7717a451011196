import { msToNumber } from '@temporalio/common/lib/time';
import { isIncomingToGroup } from '../lib/group';
import { UNANSWERED_NETWORK_STATUSES } from '../lib/network-status';
import type { NetworkClient } from '../network/client';
import { txListPages } from '../network/transactions';

export interface UnansweredIncomingQuery {
  gatewayDid: string;
  subsidiaryDids: string[];
  /** Younger transactions are left to their webhook. */
  minAge: string;
  /** At most this many ids per sweep, oldest first; the next sweep takes the rest. */
  limit: number;
}

interface ListedTx {
  id: string;
  createdAt?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
}

/**
 * The sweep's look at the network: the incoming transactions of the gateway and its subsidiaries that still wait for
 * an answer, whether or not a webhook ever told us about them. Starting their workflows is the sweep workflow's job.
 */
export async function listUnansweredIncoming(
  network: NetworkClient,
  query: UnansweredIncomingQuery,
): Promise<string[]> {
  const group = { gatewayDid: query.gatewayDid, subsidiaryDids: query.subsidiaryDids };
  const before = Date.now() - msToNumber(query.minAge as never);
  const ids = new Set<string>();
  for (const vaspDID of [query.gatewayDid, ...query.subsidiaryDids]) {
    if (ids.size >= query.limit) break;
    const pages = txListPages<ListedTx>(network, {
      vaspDID,
      txDirection: 'incoming',
      status: [...UNANSWERED_NETWORK_STATUSES],
      sort: 'createdAt:ASC',
    });
    for await (const transactions of pages) {
      for (const tx of transactions) {
        const created = tx.createdAt ? Date.parse(tx.createdAt) : 0;
        if (created <= before && isIncomingToGroup(group, tx) && ids.size < query.limit) ids.add(tx.id);
      }
      if (ids.size >= query.limit) break;
    }
  }
  return [...ids];
}
