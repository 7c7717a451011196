/**
 * The transaction state machine, in one place: which action moves a transaction from which status to which, and which
 * side of the transfer may take it. The statuses and what groups of them mean (final, not yet sent, …) are the
 * orchestrator's own vocabulary (lib/network-status.ts). The network publishes the statuses and the action endpoints
 * but not which source statuses each action accepts; the table below is the sandbox's choice, made to match the
 * statuses' meanings:
 *
 * | action   | who         | from                                                          | to                          |
 * |----------|-------------|---------------------------------------------------------------|-----------------------------|
 * | approve  | originator  | NEW                                                           | SENT (beneficiary VASP known in the directory), else WAITING_FOR_INFORMATION |
 * | cancel   | originator  | MISSING_BENEFICIARY_DATA, NEW, WAITING_FOR_INFORMATION, SENT, ACK, NOT_READY | CANCELLED |
 * | confirm  | beneficiary | SENT, NOT_READY                                               | ACK                         |
 * | reject   | beneficiary | SENT, ACK, NOT_READY                                          | REJECTED                    |
 * | accept   | beneficiary | ACK, NOT_READY                                                | ACCEPTED                    |
 * | decline  | beneficiary | SENT, ACK, NOT_READY                                          | DECLINED                    |
 * | notReady | beneficiary | SENT, ACK                                                     | NOT_READY                   |
 *
 * The final statuses (ACCEPTED, DECLINED, REJECTED, CANCELLED, and SAVED, which is stored only and never transmitted)
 * are left by no action (tx/update may still add a txHash). A beneficiary accepts only after confirming the address
 * (ACK): the beneficiary VASP confirms it controls the destination address before it accepts. Any other
 * (action, status) pair answers 400 `NotabeneTransactionInvalidStatusError`.
 *
 * Transitions that happen without an action endpoint, made by the network itself (sandbox/transactions/service.ts):
 * - create: NEW, or straight to SENT when the beneficiary VASP is known in the directory ("status jump");
 * - SENT → ACK when the destination address is in the beneficiary VASP's address book;
 * - tx/update setting a known beneficiaryVASPdid on a WAITING_FOR_INFORMATION transaction: → SENT.
 */
import {
  FINAL_NETWORK_STATUSES,
  NETWORK_STATUSES,
  NOT_YET_SENT_NETWORK_STATUSES,
  type NetworkStatus,
} from '../../lib/network-status';

export const STATUSES = NETWORK_STATUSES;
export type TransactionStatus = NetworkStatus;

export const FINAL_STATUSES = FINAL_NETWORK_STATUSES as ReadonlySet<TransactionStatus>;
/** Everything an originator may still cancel: any status that is not final and not INCOMPLETE (the beneficiary's own). */
const CANCELLABLE: readonly TransactionStatus[] = [
  ...(NOT_YET_SENT_NETWORK_STATUSES as ReadonlySet<TransactionStatus>),
  'SENT',
  'ACK',
  'NOT_READY',
];

export const ACTIONS = ['approve', 'cancel', 'confirm', 'reject', 'accept', 'decline', 'notReady'] as const;
export type TransactionActionName = (typeof ACTIONS)[number];

export type Side = 'originator' | 'beneficiary';

interface Rule {
  by: Side;
  from: readonly TransactionStatus[];
  /** The next status; approve depends on whether the beneficiary VASP is known. */
  to: (ctx: { beneficiaryKnown: boolean }) => TransactionStatus;
}

export const TRANSITIONS: Readonly<Record<TransactionActionName, Rule>> = {
  approve: {
    by: 'originator',
    from: ['NEW'],
    to: ({ beneficiaryKnown }) => (beneficiaryKnown ? 'SENT' : 'WAITING_FOR_INFORMATION'),
  },
  cancel: {
    by: 'originator',
    from: CANCELLABLE,
    to: () => 'CANCELLED',
  },
  confirm: { by: 'beneficiary', from: ['SENT', 'NOT_READY'], to: () => 'ACK' },
  reject: { by: 'beneficiary', from: ['SENT', 'ACK', 'NOT_READY'], to: () => 'REJECTED' },
  accept: { by: 'beneficiary', from: ['ACK', 'NOT_READY'], to: () => 'ACCEPTED' },
  decline: { by: 'beneficiary', from: ['SENT', 'ACK', 'NOT_READY'], to: () => 'DECLINED' },
  notReady: { by: 'beneficiary', from: ['SENT', 'ACK'], to: () => 'NOT_READY' },
};

/** The next status, or undefined when `action` is not allowed from `status`. */
export function nextStatus(
  action: TransactionActionName,
  status: TransactionStatus,
  beneficiaryKnown: boolean,
): TransactionStatus | undefined {
  const rule = TRANSITIONS[action];
  return rule.from.includes(status) ? rule.to({ beneficiaryKnown }) : undefined;
}

export const isAction = (name: string): name is TransactionActionName => (ACTIONS as readonly string[]).includes(name);
export const isStatus = (name: string): name is TransactionStatus => (STATUSES as readonly string[]).includes(name);
