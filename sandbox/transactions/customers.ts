/** The customers' DIDs on a message (originatorDid, beneficiaryDid). */
import { randomBytes } from 'node:crypto';
import { customerDidOf } from '../address-book/store';

/**
 * A customer's DID (`originatorDid`, `beneficiaryDid`: DIDs in the spec, which requires `beneficiaryDid`): the
 * request's own; else the one the address book reports for the same (VASP, customer reference), so a customer keeps
 * its DID; else a fresh one, as the network gives every customer of a transfer a DID.
 */
export function customerDid(
  given: string | undefined,
  vaspDid: string | undefined,
  customerRef: string | undefined,
): string {
  if (given) return given;
  const derived = vaspDid && customerRef ? customerDidOf(vaspDid, customerRef) : null;
  return derived ?? `did:ethr:0x${randomBytes(20).toString('hex')}`;
}
