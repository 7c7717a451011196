import type { GroupConfig } from './config';

interface Parties {
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
}

const inGroup = (group: GroupConfig, did: string | undefined): boolean =>
  did !== undefined && (did === group.gatewayDid || group.subsidiaryDids.includes(did));

/**
 * Whether a transaction is an incoming transfer the group must answer: addressed to the gateway or one of its
 * subsidiaries, and not sent by a VASP of the group (those are outgoing transfers, followed by their own workflows).
 */
export function isIncomingToGroup(group: GroupConfig, tx: Parties): boolean {
  if (!group.gatewayDid) return false;
  return inGroup(group, tx.beneficiaryVASPdid) && !inGroup(group, tx.originatorVASPdid);
}
