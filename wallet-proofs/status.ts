/**
 * Workflow-safe checks of the small-deposit test ("Satoshi test"): whether an observed deposit is the one asked for,
 * and the random amount to ask for. No I/O, no Node built-ins: the workflow imports this.
 */
import type { DepositObserved } from './types';

/**
 * Why the observed deposit does not prove the wallet, or undefined when it does: it came from the wallet's address
 * and is exactly the amount asked for. Ethereum addresses compare without case (EIP-55 is only a checksum); bech32
 * without case too; base58 exactly.
 */
export function depositMismatch(
  expected: { address: string; amount: string },
  observed: DepositObserved,
): string | undefined {
  if (!sameAddress(expected.address, observed.from))
    return `the deposit ${observed.txHash} came from another address than the wallet's`;
  if (stripZeros(observed.amount) !== stripZeros(expected.amount))
    return `the deposit ${observed.txHash} is ${observed.amount} base units, not the ${expected.amount} asked for`;
  return undefined;
}

const stripZeros = (digits: string) => digits.replace(/^0+(?=\d)/, '');

function sameAddress(a: string, b: string): boolean {
  const caseless = (s: string) => /^0x/i.test(s) || /^(bc|tb|bcrt)1/i.test(s);
  return caseless(a) && caseless(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * A random amount in base units worth about `usd` (between 0.8 and 1.2 times it), given the base units one USD buys;
 * `random` is in [0, 1). At least 1 base unit.
 */
export function depositAmountFor(baseUnitsPerUsd: number, usd: number, random: number): string {
  const units = Math.max(1, Math.round(baseUnitsPerUsd * usd * (0.8 + 0.4 * random)));
  return BigInt(units).toString();
}
