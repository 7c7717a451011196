/**
 * The network's transaction statuses and the words the code uses for groups of them, in one place. Workflow-safe (no
 * I/O, no Node built-ins): both workflows, outgoing/, incoming/, transfer-view/ and the sandbox's transition table
 * read these, so the orchestrator and the sandbox agree on what each status means.
 */

/** The network's `TransactionStatus` enum, all twelve values. */
export const NETWORK_STATUSES = [
  'SAVED',
  'MISSING_BENEFICIARY_DATA',
  'NEW',
  'WAITING_FOR_INFORMATION',
  'SENT',
  'ACK',
  'ACCEPTED',
  'DECLINED',
  'REJECTED',
  'CANCELLED',
  'INCOMPLETE',
  'NOT_READY',
] as const;
export type NetworkStatus = (typeof NETWORK_STATUSES)[number];

/**
 * Final: nothing moves the transaction on. The beneficiary's answers (ACCEPTED, DECLINED, REJECTED), the originator's
 * CANCELLED, and SAVED: stored only, never transmitted (below the threshold, non-custodial or internal), so no
 * counterparty ever answers it and no action leaves it.
 */
export const FINAL_NETWORK_STATUSES: ReadonlySet<string> = new Set<NetworkStatus>([
  'ACCEPTED',
  'DECLINED',
  'REJECTED',
  'CANCELLED',
  'SAVED',
]);

/** Created and not yet transmitted to the beneficiary VASP: waiting for approval, for data, or for a contact. */
export const NOT_YET_SENT_NETWORK_STATUSES: ReadonlySet<string> = new Set<NetworkStatus>([
  'MISSING_BENEFICIARY_DATA',
  'NEW',
  'WAITING_FOR_INFORMATION',
]);

/** At the beneficiary VASP and not answered yet: received (SENT) or with the address confirmed (ACK). */
export const UNANSWERED_NETWORK_STATUSES: ReadonlySet<string> = new Set<NetworkStatus>(['SENT', 'ACK']);

/**
 * Acknowledged: the beneficiary VASP has confirmed it controls the destination address (ACK), or the transaction is
 * final. A confirmation is not needed (or no longer possible) from these.
 */
export const ACKNOWLEDGED_NETWORK_STATUSES: ReadonlySet<string> = new Set<string>(['ACK', ...FINAL_NETWORK_STATUSES]);

export const isNetworkStatus = (status: string): status is NetworkStatus =>
  (NETWORK_STATUSES as readonly string[]).includes(status);
export const isFinalNetworkStatus = (status: string): boolean => FINAL_NETWORK_STATUSES.has(status);
export const isAcknowledged = (status: string): boolean => ACKNOWLEDGED_NETWORK_STATUSES.has(status);

/**
 * How far a transaction has come, for ordering updates that arrive out of order (webhooks are delivered concurrently
 * and retried): not yet created or unknown 0, not yet sent 1, SENT 2, answered but not final (ACK, NOT_READY) 3,
 * final 4. ACK and NOT_READY rank alike: the beneficiary may move between them.
 */
export function networkStatusProgress(status: string): number {
  if (FINAL_NETWORK_STATUSES.has(status)) return 4;
  if (status === 'ACK' || status === 'NOT_READY') return 3;
  if (status === 'SENT') return 2;
  if (NOT_YET_SENT_NETWORK_STATUSES.has(status) || status === 'INCOMPLETE') return 1;
  return 0;
}

/** A Transaction's `updatedAt` when it has one (a string), for ordering its updates. */
export const networkUpdatedAtOf = (tx: { updatedAt?: unknown } | undefined): string | undefined =>
  typeof tx?.updatedAt === 'string' ? tx.updatedAt : undefined;

/**
 * The incoming transfer's order of statuses (workflows/incoming-transfer.ts): webhooks may arrive out of order, and its
 * status only ever moves forward — unknown 0, any other 1, ACK 2, final 3. Coarser than networkStatusProgress (SENT and
 * NOT_READY rank alike here): running incoming workflows replay with this order, so it changes only behind a patch.
 */
export const incomingStatusRank = (status: string): number =>
  FINAL_NETWORK_STATUSES.has(status) ? 3 : status === 'ACK' ? 2 : status === 'UNKNOWN' ? 0 : 1;
