import { incomingStatusRank } from '../lib/network-status';

/** What the incoming workflow last published about a transfer (its console list entry, written from its state). */
export interface PublishedIncoming {
  status: string;
  subsidiaryDid: string | null;
}

/**
 * Whether a webhook tells the incoming transfer's workflow nothing it does not know: the network reports back the
 * workflow's own redirect, confirmation and answer, each of which the workflow already took from the call's result.
 * Known when the workflow's published status is this one or past it (its signal handler would ignore it) and the
 * webhook names no subsidiary it has not routed to. The list entry is never ahead of the workflow (it is written from
 * its state, versioned), so a known update is safe to skip; one the entry does not show yet is signalled as before.
 * A run that failed is started again by the next webhook with news (or by the sweep), not by one it already knew.
 */
export function isKnownToIncomingWorkflow(
  published: PublishedIncoming | undefined,
  update: { status: string; beneficiaryVaspDid?: string },
  subsidiaryDids: readonly string[],
): boolean {
  if (!published) return false;
  const behind =
    update.status === published.status || incomingStatusRank(update.status) < incomingStatusRank(published.status);
  const beneficiary = update.beneficiaryVaspDid;
  const newSubsidiary = !!beneficiary && subsidiaryDids.includes(beneficiary) && published.subsidiaryDid === null;
  return behind && !newSubsidiary;
}
