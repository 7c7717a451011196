/**
 * When a transfer to a self-hosted wallet needs its ownership proof, and which proof it carries: the sending
 * subsidiary's rule (jurisdictions' selfHostedProof) at the transfer's price, a VERIFIED proof of the customer's from
 * the store, and that proof in the network's OwnershipProof shape (`beneficiaryProof` of tx/create).
 */
import type { JurisdictionRules } from '../jurisdictions/types';
import type { Queryable } from '../db/pool';
import { assetLabel, type OutgoingTransferBody } from '../outgoing/request';
import { challengeFor } from './challenge';
import { challengeFieldsOf, storedSpelling } from './proofs';
import { addProofWaiter, removeProofWaiter, verifiedProofOf } from './store';
import type { WalletProof } from './types';

/** Whether the jurisdiction asks for a proof of a self-hosted wallet at `value` (its currency; undefined: unpriced). */
export function ownershipProofRequired(rules: JurisdictionRules, value: number | undefined): boolean {
  const rule = rules.selfHostedProof;
  if (!rule.required) return false;
  // Unpriced is never below a threshold (as the classification treats it): the proof is asked for.
  return value === undefined || value > (rule.aboveAmount ?? 0);
}

/** The wallet a transfer goes to, as proofs are stored: the asset label and the address's stored spelling. */
export function beneficiaryWallet(body: Pick<OutgoingTransferBody, 'transactionAsset' | 'transactionBlockchainInfo'>) {
  return {
    asset: assetLabel(body.transactionAsset),
    address: storedSpelling(body.transactionBlockchainInfo.destination),
  };
}

/**
 * The customer's usable proof of the wallet: VERIFIED and not expired, of `customerRef` (the transfer's
 * `originatorRef`). A proof of another customer does not do: it says the wallet is self-hosted, not that this
 * customer controls it. No customer reference: none.
 */
export async function usableProof(
  db: Queryable,
  wallet: { asset: string; address: string },
  customerRef: string | undefined,
  now: Date,
): Promise<WalletProof | undefined> {
  if (customerRef === undefined) return undefined;
  return verifiedProofOf(db, { ...wallet, customerRef }, now);
}

/** Whether anyone proved the wallet (VERIFIED, unexpired): the address is then a known self-hosted wallet. */
export async function isProvenWallet(db: Queryable, wallet: { asset: string; address: string }, now: Date) {
  return (await verifiedProofOf(db, wallet, now)) !== undefined;
}

/** The network's OwnershipProof (sandbox/transactions/proofs.ts reads the same shape). */
export interface NetworkOwnershipProof {
  type: 'eip-191' | 'eip-712' | 'bip-137' | 'bip-322' | 'microtransfer' | 'self-declaration';
  proof?: string;
  attestation?: string;
  address: string;
  confirmed?: boolean;
}

const SIGNATURE_TYPES = { EIP191: 'eip-191', EIP712: 'eip-712', BIP137: 'bip-137', BIP322: 'bip-322' } as const;

/**
 * A VERIFIED proof as the network's `beneficiaryProof`: a signature as its scheme's type with the signature and the
 * challenge it signed (so the counterparty can check it), a small deposit as `microtransfer` with the deposit's
 * transaction hash. A screenshot or declaration a compliance officer approved goes as `self-declaration`: the
 * network's `screenshot` type needs the screenshot's URL, which is never kept here.
 */
export function networkProofOf(p: WalletProof): NetworkOwnershipProof {
  const evidence = p.evidence as Record<string, unknown>;
  if (p.method === 'SIGNATURE' && p.scheme && typeof evidence.signature === 'string') {
    const challenge = challengeFor(p.scheme, challengeFieldsOf(p));
    return {
      type: SIGNATURE_TYPES[p.scheme],
      proof: evidence.signature,
      attestation: 'message' in challenge ? challenge.message : JSON.stringify(challenge.typedData),
      address: p.address,
    };
  }
  if (p.method === 'SMALL_DEPOSIT' && typeof evidence.txHash === 'string')
    return { type: 'microtransfer', proof: evidence.txHash, address: p.address };
  return {
    type: 'self-declaration',
    attestation: `I certify that ${p.asset} account ${p.address} belongs to me. (${p.method === 'SCREENSHOT' ? 'screenshot' : 'declaration'} reviewed by the originating VASP's compliance, proof ${p.id})`,
    confirmed: true,
    address: p.address,
  };
}

/**
 * A workflow waiting for the customer's proof of the wallet: registered as a waiter first, then the store asked, so a
 * proof verified in between is either seen here or signalled to it. Found: the waiter is removed and true answered.
 */
export async function registerProofWaiter(
  db: Queryable,
  wallet: { asset: string; address: string },
  customerRef: string | undefined,
  workflowId: string,
  now: Date,
): Promise<boolean> {
  await addProofWaiter(db, { ...wallet, workflowId });
  if (!(await usableProof(db, wallet, customerRef, now))) return false;
  await removeProofWaiter(db, { ...wallet, workflowId });
  return true;
}
