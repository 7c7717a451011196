/**
 * Fiat values for policies' amount rules from a price table in configuration (POLICY_PRICES): per asset its decimals
 * and its price in each currency a policy may state. An asset or currency the table does not price is unknown, and an
 * amount rule then sends the transfer to a person; nothing is guessed.
 */
import { ConfigError } from '../lib/errors';

export interface AssetPrices {
  decimals: number;
  /** Price of one whole unit, per ISO 4217 currency. */
  prices: Record<string, number>;
}

export type PriceTable = Record<string, AssetPrices>;

export function parsePriceTable(raw: string | undefined): PriceTable {
  if (!raw?.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('POLICY_PRICES', 'is not JSON', 'Set it to {"ETH": {"decimals": 18, "USD": 3000}, …}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(
      'POLICY_PRICES',
      'is not an object of assets',
      'Set it to {"ETH": {"decimals": 18, "USD": 3000}}',
    );
  const table: PriceTable = {};
  for (const [asset, entry] of Object.entries(parsed as Record<string, Record<string, unknown>>)) {
    const { decimals, ...prices } = entry ?? {};
    if (!Number.isInteger(decimals) || (decimals as number) < 0 || (decimals as number) > 36)
      throw new ConfigError(
        'POLICY_PRICES',
        `${asset}.decimals must be an integer from 0 to 36`,
        'Give each asset its decimals',
      );
    for (const [currency, price] of Object.entries(prices)) {
      if (!/^[A-Z]{3}$/.test(currency) || typeof price !== 'number' || !(price >= 0) || !Number.isFinite(price))
        throw new ConfigError(
          'POLICY_PRICES',
          `${asset}.${currency} must be an ISO 4217 currency with a non-negative price`,
          'Prices are numbers per currency, e.g. "USD": 3000',
        );
    }
    table[asset] = { decimals: decimals as number, prices: prices as Record<string, number> };
  }
  return table;
}

/** The amount (base units) in `currency`, or undefined when the table does not price it. */
export function fiatFromTable(
  table: PriceTable,
  query: { asset: string; amount: string; currency: string },
): { value: number; source: string } | undefined {
  const entry = table[query.asset];
  const price = entry?.prices[query.currency];
  if (!entry || price === undefined || !/^\d{1,78}$/.test(query.amount)) return undefined;
  // Whole units and the fraction apart, so 18 decimals keep their precision up to the price's own.
  const units = BigInt(query.amount);
  const scale = 10n ** BigInt(entry.decimals);
  const value = Number(units / scale) * price + (Number(units % scale) / Number(scale)) * price;
  return { value, source: `price table (POLICY_PRICES): 1 ${query.asset} = ${price} ${query.currency}` };
}
