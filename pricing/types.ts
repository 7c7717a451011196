/** Workflow-safe types of pricing: an amount in base units priced in a fiat currency, or why it could not be. */

/** The network's `CustomAssetPrice`: the caller's own price of one whole unit in USD, with the asset's decimals. */
export interface CustomAssetPrice {
  priceUSD: number;
  decimals: number;
}

export interface PriceQuery {
  /** Asset symbol as the transfer names it (e.g. ETH); matched case-insensitively against the table. */
  asset: string;
  /** Amount in the asset's base units, a string of digits. */
  amount: string;
  /** ISO 4217 currency to price in. */
  currency: string;
  customAssetPrice?: CustomAssetPrice;
}

export interface FiatAmount {
  /** The amount in `currency`. */
  value: number;
  currency: string;
  /** Price of one whole unit of the asset, in `priceCurrency`. */
  price: number;
  priceCurrency: string;
  /** Where the price (and FX rate, if any) came from. */
  source: string;
  /** When the price was observed (ISO 8601): its age is what staleness is judged on. */
  at: string;
}

export interface PriceUnknown {
  /** Why no fiat value is given (never a guess). */
  unknown: string;
}

export type PriceResult = FiatAmount | PriceUnknown;

export function isPriced(result: PriceResult): result is FiatAmount {
  return (result as FiatAmount).value !== undefined;
}
