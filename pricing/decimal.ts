/**
 * Exact decimal arithmetic for pricing: a base-unit amount times decimal prices, in bigint, rounded to a number only
 * once at the end. A float product of an 18-decimal amount would drift beyond what the price itself states.
 */

export interface Decimal {
  /** The digits, as an integer. */
  digits: bigint;
  /** How many of them follow the decimal point. */
  scale: number;
}

/** A finite non-negative number as its exact shortest decimal (how JavaScript prints it), e.g. 2.2 → 22 / 10^1. */
export function decimalOf(value: number): Decimal {
  if (!Number.isFinite(value) || value < 0) throw new RangeError('a price must be a finite non-negative number');
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) throw new RangeError('unparseable number');
  const fraction = match[2] ?? '';
  const exponent = Number(match[3] ?? 0);
  const digits = BigInt(match[1] + fraction);
  const scale = fraction.length - exponent;
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 };
}

/** `amount` base units (10^-decimals each) times the given factors, as the nearest number. */
export function multiply(amount: bigint, decimals: number, factors: Decimal[]): number {
  let digits = amount;
  let scale = decimals;
  for (const factor of factors) {
    digits *= factor.digits;
    scale += factor.scale;
  }
  return toNumber({ digits, scale });
}

/** The nearest number to an exact decimal: through its decimal string, so no intermediate rounding. */
export function toNumber({ digits, scale }: Decimal): number {
  if (scale === 0) return Number(digits);
  const text = digits.toString().padStart(scale + 1, '0');
  return Number(`${text.slice(0, -scale)}.${text.slice(-scale)}`);
}
