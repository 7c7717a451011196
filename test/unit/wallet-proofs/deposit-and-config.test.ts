import { ConfigError } from '../../../lib/errors';
import { loadWalletProofConfig } from '../../../wallet-proofs/config';
import { depositAmountFor, depositMismatch } from '../../../wallet-proofs/status';

describe('small-deposit test: the amount asked for and the deposit that proves the wallet', () => {
  const wallet = '0x2092FF53231f07dAEfF4Af06aa58e09643943922';
  const tx = `0x${'ab'.repeat(32)}`;

  it('accepts the exact amount from the wallet, whatever the case of the Ethereum address', () => {
    expect(
      depositMismatch({ address: wallet, amount: '333' }, { txHash: tx, from: wallet.toLowerCase(), amount: '333' }),
    ).toBeUndefined();
    expect(
      depositMismatch({ address: wallet, amount: '333' }, { txHash: tx, from: wallet, amount: '0333' }),
    ).toBeUndefined();
  });

  it('names why another sender or another amount does not prove it', () => {
    expect(
      depositMismatch({ address: wallet, amount: '333' }, { txHash: tx, from: `0x${'11'.repeat(20)}`, amount: '333' }),
    ).toMatch(/another address/);
    expect(depositMismatch({ address: wallet, amount: '333' }, { txHash: tx, from: wallet, amount: '334' })).toMatch(
      /334 base units, not the 333/,
    );
  });

  it('compares base58 Bitcoin addresses exactly (their case is the address)', () => {
    const p2pkh = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
    expect(
      depositMismatch({ address: p2pkh, amount: '1' }, { txHash: tx, from: p2pkh.toLowerCase(), amount: '1' }),
    ).toMatch(/another address/);
  });

  it('draws 0.8 to 1.2 times the value in base units, at least one', () => {
    const perUsd = 1e18 / 3000; // wei per USD at 3,000 USD per ETH
    expect(Number(depositAmountFor(perUsd, 1, 0))).toBeCloseTo(0.8 * perUsd, -3);
    expect(Number(depositAmountFor(perUsd, 1, 0.999999))).toBeLessThanOrEqual(1.2 * perUsd);
    expect(depositAmountFor(1e-9, 1, 0.5)).toBe('1');
    expect(depositAmountFor(perUsd, 1, 0.5)).toMatch(/^\d+$/);
  });
});

describe('wallet proof settings', () => {
  it('has defaults, and reads the deposit addresses per chain', () => {
    const c = loadWalletProofConfig({ WALLET_PROOF_DEPOSIT_ADDRESSES: '{"ethereum":"0xabc"}' });
    expect(c).toMatchObject({ validDays: 365, challengeTtl: '1h', depositDeadline: '48h', depositUsd: 1 });
    expect(c.depositAddresses).toEqual({ ethereum: '0xabc' });
  });

  it('refuses a bad setting, naming it', () => {
    for (const [name, value] of [
      ['WALLET_PROOF_VALID_DAYS', '0'],
      ['WALLET_PROOF_DEPOSIT_ADDRESSES', '{"solana":"x"}'],
      ['WALLET_PROOF_DEPOSIT_ADDRESSES', 'not json'],
      ['WALLET_PROOF_DEPOSIT_USD', '-1'],
      ['WALLET_PROOF_CHALLENGE_TTL', 'soon'],
    ]) {
      let thrown: unknown;
      try {
        loadWalletProofConfig({ [name!]: value });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).setting).toBe(name);
    }
  });
});
