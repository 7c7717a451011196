/**
 * An incoming transaction at the network as the group's routing reads it, and the group's answers to it. Every answer
 * counts as done when the transaction already shows its outcome (a retry, or the network's own automation first).
 */
import { ACKNOWLEDGED_NETWORK_STATUSES, FINAL_NETWORK_STATUSES } from '../lib/network-status';
import type { NetworkClient } from '../network/client';
import { txAccept, txConfirm, txDecline, txInfo, txNotReady, txRedirect, txReject } from '../network/transactions';

/** The network's Transaction, as far as incoming routing reads it (personal data is never passed on). */
export interface IncomingNetworkTx {
  id: string;
  status: string;
  transactionAsset?: unknown;
  transactionAmount?: string;
  transactionRef?: string;
  createdAt?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  transactionBlockchainInfo?: { destination?: string; origin?: string };
  ivms101?: { originator?: { originatorPersons?: Person[] } };
  pii?: unknown;
}
interface Person {
  naturalPerson?: {
    name?: { nameIdentifier?: { primaryIdentifier?: string; secondaryIdentifier?: string }[] }[];
    geographicAddress?: { country?: unknown }[];
  };
  legalPerson?: {
    name?: { nameIdentifier?: { legalPersonName?: string }[] };
    geographicAddress?: { country?: unknown }[];
  };
}

export interface IncomingTxSummary {
  id: string;
  status: string;
  asset: string;
  destination: string;
  originatorVaspDid?: string;
  beneficiaryVaspDid?: string;
  amount?: string;
  /** The originator's transactionRef, when it gave one. */
  reference?: string;
  createdAt?: string;
}

const assetOf = (a: unknown): string =>
  typeof a === 'string'
    ? a
    : a && typeof a === 'object'
      ? String((a as Record<string, unknown>).caip19 ?? (a as Record<string, unknown>).coingeckoId ?? 'UNKNOWN')
      : 'UNKNOWN';

export const summary = (tx: IncomingNetworkTx): IncomingTxSummary => ({
  id: tx.id,
  status: tx.status,
  asset: assetOf(tx.transactionAsset),
  destination: tx.transactionBlockchainInfo?.destination ?? '',
  originatorVaspDid: tx.originatorVASPdid,
  beneficiaryVaspDid: tx.beneficiaryVASPdid,
  amount: tx.transactionAmount,
  reference: tx.transactionRef,
  createdAt: tx.createdAt,
});

export const incomingTx = (network: NetworkClient, id: string) => txInfo<IncomingNetworkTx>(network, id);

/** The transaction as the workflow sees it; `poll` (the wait's fallback for lost webhooks) is low priority in the budget. */
export async function incomingTransaction(
  network: NetworkClient,
  transactionId: string,
  how?: { poll?: boolean },
): Promise<IncomingTxSummary> {
  return summary(await incomingTx(how?.poll ? network.at('low') : network, transactionId));
}

/** Hands the transaction to a subsidiary, unless it is already addressed to it. */
export async function redirectIncoming(
  network: NetworkClient,
  transactionId: string,
  to: string,
): Promise<IncomingTxSummary> {
  const current = await incomingTx(network, transactionId);
  if (current.beneficiaryVASPdid === to) return summary(current);
  return summary(await txRedirect<IncomingNetworkTx>(network, transactionId, to));
}

export async function confirmIncoming(network: NetworkClient, transactionId: string): Promise<IncomingTxSummary> {
  return summary((await txConfirm<IncomingNetworkTx>(network, transactionId, ACKNOWLEDGED_NETWORK_STATUSES)).tx);
}

export async function acceptIncoming(network: NetworkClient, transactionId: string): Promise<IncomingTxSummary> {
  return summary((await txAccept<IncomingNetworkTx>(network, transactionId, new Set(['ACCEPTED']))).tx);
}

export async function declineIncoming(
  network: NetworkClient,
  transactionId: string,
  reason: string,
): Promise<IncomingTxSummary> {
  return summary((await txDecline<IncomingNetworkTx>(network, transactionId, reason, new Set(['DECLINED']))).tx);
}

export async function rejectIncoming(
  network: NetworkClient,
  transactionId: string,
  reason: string,
): Promise<IncomingTxSummary> {
  return summary((await txReject<IncomingNetworkTx>(network, transactionId, reason, new Set(['REJECTED']))).tx);
}

/**
 * Tells the network the group is not ready to answer (its policy wants a person first). Done when the transaction
 * already shows NOT_READY or has ended.
 */
export async function markIncomingNotReady(network: NetworkClient, transactionId: string): Promise<IncomingTxSummary> {
  const settled = new Set(['NOT_READY', ...FINAL_NETWORK_STATUSES]);
  const reason = 'the beneficiary VASP is reviewing the transfer';
  return summary((await txNotReady<IncomingNetworkTx>(network, transactionId, reason, settled)).tx);
}
