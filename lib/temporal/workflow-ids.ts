/**
 * Business workflow ids: one place that says which id a workflow runs under, shared by the API, the schedules and the
 * CLI. An id doubles as the uniqueness rule ("one rotation per VASP at a time", "one workflow per transaction").
 */
export const workflowIds = {
  /** One rotation per VASP at a time: a second start while one runs is refused. */
  keyRotation: (vaspDid: string) => `key-rotation-${vaspDid}`,
  /** The per-VASP schedule (Temporal adds the scheduled time to the ids of the runs it starts). */
  keyRotationSchedule: (vaspDid: string) => `key-rotation-schedule-${vaspDid}`,
  scheduledKeyRotation: (vaspDid: string) => `scheduled-key-rotation-${vaspDid}`,
  connectivityCheck: (at: Date) => `connectivity-check-${at.toISOString().replace(/[:.]/g, '-')}`,
  outgoingTransfer: (ref: string) => `outgoing-${ref}`,
  /** One workflow per incoming transaction: every webhook about it signals (or starts) the same one. */
  incomingTransfer: (transactionId: string) => `incoming-${transactionId}`,
  /** The schedule of the sweep that starts incoming transfers no webhook started, and the id its runs start under. */
  incomingSweepSchedule: 'incoming-sweep-schedule',
  scheduledIncomingSweep: 'incoming-sweep',
  /** One on-demand reconciliation per subsidiary at a time (scheduled runs get the schedule's time appended). */
  addressBookReconcile: (vaspDid: string) => `address-book-reconcile-${vaspDid}`,
  /** The nightly schedule of a subsidiary, and the id its runs start under (plus the scheduled time). */
  addressBookSchedule: (vaspDid: string) => `address-book-schedule-${vaspDid}`,
  scheduledAddressBookReconcile: (vaspDid: string) => `address-book-nightly-${vaspDid}`,
  /** One workflow per wallet ownership proof (wallet-proofs/). */
  walletProof: (proofId: string) => `wallet-proof-${proofId}`,
  /** One workflow per deposit the custody system reports (deposits/). */
  deposit: (depositId: string) => `deposit-${depositId}`,
  /** The one data-retention schedule, and the id its runs start under (plus the scheduled time). */
  retentionSchedule: 'retention-schedule',
  scheduledRetentionSweep: 'retention-nightly',
};
