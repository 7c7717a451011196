/**
 * Business workflow ids: one place that says which id a workflow runs under, shared by the API, the schedules and the
 * CLI. An id doubles as the uniqueness rule ("one rotation per VASP at a time", "one workflow per transaction").
 */
export const workflowIds = {
  connectivityCheck: (at: Date) => `connectivity-check-${at.toISOString().replace(/[:.]/g, '-')}`,
  outgoingTransfer: (ref: string) => `outgoing-${ref}`,
};
