import { rulesOrFatf } from '../../../jurisdictions';
import { ownershipProof } from '../../../sandbox/transactions/proofs';
import { challengeFor } from '../../../wallet-proofs/challenge';
import { beneficiaryWallet, networkProofOf, ownershipProofRequired } from '../../../wallet-proofs/requirement';
import type { WalletProof } from '../../../wallet-proofs/types';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

const proof = (over: Partial<WalletProof>): WalletProof => ({
  id: 'wp-1',
  customerRef: 'cust-1',
  asset: 'ETH',
  address: ADDRESS,
  vaspDid: 'did:ethr:0x1111111111111111111111111111111111111111',
  method: 'SIGNATURE',
  scheme: 'EIP191',
  status: 'VERIFIED',
  reason: null,
  nonce: 'ab'.repeat(32),
  challengeExpiresAt: '2026-11-28T18:00:00.000Z',
  depositAddress: null,
  depositAmount: null,
  evidence: { signature: `0x${'11'.repeat(65)}` },
  createdBy: 'key:operator',
  createdAt: '2026-11-28T17:00:00.000Z',
  updatedAt: '2026-11-28T17:00:00.000Z',
  verifiedAt: '2026-11-28T17:00:00.000Z',
  expiresAt: '2027-11-28T17:00:00.000Z',
  ...over,
});

describe('wallet proofs required by transfers (wallet-proofs/requirement.ts)', () => {
  it("asks for a proof by the sending subsidiary's rule: the EU above 1,000 EUR, Switzerland at any amount, unpriced always", () => {
    const eu = rulesOrFatf('DE');
    expect(ownershipProofRequired(eu, 1000)).toBe(false);
    expect(ownershipProofRequired(eu, 1000.01)).toBe(true);
    expect(ownershipProofRequired(eu, 900)).toBe(false);
    expect(ownershipProofRequired(eu, undefined)).toBe(true);
    const ch = rulesOrFatf('CH');
    expect(ownershipProofRequired(ch, 0.01)).toBe(true);
    expect(ownershipProofRequired(rulesOrFatf('US'), 1_000_000)).toBe(false);
    expect(ownershipProofRequired(rulesOrFatf(undefined), undefined)).toBe(false);
  });

  it('names the wallet as proofs are stored: the asset label and the EIP-55 spelling', () => {
    expect(
      beneficiaryWallet({
        transactionAsset: 'ETH',
        transactionBlockchainInfo: { destination: ADDRESS.toLowerCase() },
      }),
    ).toEqual({ asset: 'ETH', address: ADDRESS });
  });

  it("builds each proof as the network's OwnershipProof, which the sandbox's parser takes as it is", () => {
    const signed = networkProofOf(proof({}));
    expect(signed).toMatchObject({ type: 'eip-191', proof: `0x${'11'.repeat(65)}`, address: ADDRESS });
    // The text the wallet signed, so the counterparty can check the signature.
    const challenge = challengeFor('EIP191', {
      nonce: 'ab'.repeat(32),
      address: ADDRESS,
      asset: 'ETH',
      customerRef: 'cust-1',
      vaspDid: proof({}).vaspDid,
      expiresAt: proof({}).challengeExpiresAt,
    });
    expect(signed.attestation).toBe((challenge as { message: string }).message);
    const typed = networkProofOf(proof({ scheme: 'EIP712' }));
    expect(typed.type).toBe('eip-712');
    expect(JSON.parse(typed.attestation!)).toMatchObject({ primaryType: 'OwnershipProof' });
    expect(networkProofOf(proof({ scheme: 'BIP322', evidence: { signature: 'AkcwRAIg' } })).type).toBe('bip-322');
    const deposit = networkProofOf(
      proof({
        method: 'SMALL_DEPOSIT',
        scheme: null,
        evidence: { txHash: `0x${'cd'.repeat(32)}`, from: ADDRESS, amount: '7' },
      }),
    );
    expect(deposit).toEqual({ type: 'microtransfer', proof: `0x${'cd'.repeat(32)}`, address: ADDRESS });
    const screenshot = networkProofOf(
      proof({ method: 'SCREENSHOT', scheme: null, evidence: { reviewedBy: 'oidc:u-1', decision: 'approve' } }),
    );
    expect(screenshot).toMatchObject({ type: 'self-declaration', confirmed: true, address: ADDRESS });
    expect(screenshot.attestation).toContain(`ETH account ${ADDRESS}`);
    for (const p of [signed, typed, deposit, screenshot])
      expect(ownershipProof({ beneficiaryProof: p }, 'beneficiaryProof')).toEqual(p);
  });
});
