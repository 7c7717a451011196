/** The gateway VASP and its subsidiaries (GATEWAY_VASP_DID, SUBSIDIARY_VASP_DIDS). */
export interface GroupConfig {
  gatewayDid?: string;
  subsidiaryDids: string[];
}

interface Parties {
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
}

/** Whether the VASP is the group's gateway or one of its subsidiaries. */
export const inGroup = (group: GroupConfig, did: string | undefined): boolean =>
  did !== undefined && (did === group.gatewayDid || group.subsidiaryDids.includes(did));

/**
 * Whether a transaction is an incoming transfer the group must answer: addressed to the gateway or one of its
 * subsidiaries, whoever sent it. A transfer between two VASPs of the group is both: the originator's outgoing
 * workflow follows it to its end, and the beneficiary's incoming workflow confirms, screens and accepts it, as the
 * network expects of any beneficiary VASP (docs/reliability.md, 15.3).
 */
export function isIncomingToGroup(group: GroupConfig, tx: Parties): boolean {
  if (!group.gatewayDid) return false;
  return inGroup(group, tx.beneficiaryVASPdid);
}
