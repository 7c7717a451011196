/**
 * Pricing: an amount in base units as fiat, for thresholds and policies' amount rules. The price is the request's
 * `customAssetPrice` when given, else the operator's price API (PRICE_API_URL, cached PRICE_CACHE) or the price
 * table; FX from USD comes from the table. A missing, stale or unreachable price is `{unknown: reason}`, never a guess.
 */
import type { PricingConfig } from './config';
import { decimalOf, multiply } from './decimal';
import { embeddedTable, readTable, type PriceTable } from './table';
import type { CustomAssetPrice, PriceQuery, PriceResult } from './types';

export type { PricingConfig } from './config';
export type { CustomAssetPrice, FiatAmount, PriceQuery, PriceResult, PriceUnknown } from './types';
export { isPriced } from './types';

export interface Pricing {
  toFiat(query: PriceQuery): Promise<PriceResult>;
  /** The asset's decimals from the table, or undefined when the table does not know the asset. */
  decimals(asset: string): number | undefined;
  /** The symbols the table knows (upper case): the console reads their decimals and prices. */
  assets(): string[];
}

export interface PricingDeps {
  /** A table instead of PRICE_TABLE_FILE or the embedded one (tests). */
  table?: PriceTable;
  fetch?: typeof fetch;
  now?: () => number;
}

interface UsdPrice {
  priceUSD: number;
  at: string;
  source: string;
}

const AMOUNT = /^\d{1,78}$/;

export function createPricing(config: PricingConfig, deps: PricingDeps = {}): Pricing {
  const table = deps.table ?? (config.tableFile ? readTable(config.tableFile) : embeddedTable());
  const now = deps.now ?? Date.now;
  const doFetch = deps.fetch ?? fetch;
  const cache = new Map<string, { value: Promise<UsdPrice | { unknown: string }>; until: number }>();

  async function fromApi(symbol: string): Promise<UsdPrice | { unknown: string }> {
    const url = `${config.apiUrl}?asset=${encodeURIComponent(symbol)}`;
    try {
      const res = await doFetch(url, { signal: AbortSignal.timeout(config.apiTimeoutMs) });
      if (!res.ok) return { unknown: `the price API answered ${res.status} for ${symbol}` };
      const body = (await res.json()) as { priceUSD?: unknown; at?: unknown };
      const price = body.priceUSD;
      if (typeof price !== 'number' || !Number.isFinite(price) || price < 0 || typeof body.at !== 'string')
        return { unknown: `the price API gave no usable {priceUSD, at} for ${symbol}` };
      if (Number.isNaN(Date.parse(body.at))) return { unknown: `the price API gave no valid time for ${symbol}` };
      return { priceUSD: price, at: new Date(body.at).toISOString(), source: `price API ${config.apiUrl}` };
    } catch (e) {
      return (e as Error).name === 'TimeoutError'
        ? { unknown: `the price API gave no answer within ${config.apiTimeoutMs} ms` }
        : { unknown: 'the price API is unreachable' };
    }
  }

  function usdPrice(symbol: string): Promise<UsdPrice | { unknown: string }> {
    if (!config.apiUrl) {
      const row = table.assets[symbol];
      return Promise.resolve(
        row ? { priceUSD: row.priceUSD, at: row.at, source: table.source } : { unknown: `no price for ${symbol}` },
      );
    }
    const hit = cache.get(symbol);
    if (hit && hit.until > now()) return hit.value;
    // The promise is cached, so concurrent requests share one call; an unknown answer is not kept.
    const value = fromApi(symbol);
    cache.set(symbol, { value, until: now() + config.cacheMs });
    void value.then((v) => {
      if ('unknown' in v) cache.delete(symbol);
    });
    return value;
  }

  function custom(price: CustomAssetPrice): UsdPrice | { unknown: string } {
    const { priceUSD, decimals } = price;
    if (typeof priceUSD !== 'number' || !Number.isFinite(priceUSD) || priceUSD < 0)
      return { unknown: 'customAssetPrice.priceUSD is not a non-negative number' };
    if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36)
      return { unknown: 'customAssetPrice.decimals is not an integer from 0 to 36' };
    return { priceUSD, at: new Date(now()).toISOString(), source: 'customAssetPrice of the request' };
  }

  return {
    decimals: (asset) => table.assets[asset.toUpperCase()]?.decimals,
    assets: () => Object.keys(table.assets),

    async toFiat({ asset, amount, currency, customAssetPrice }) {
      if (!AMOUNT.test(amount)) return { unknown: 'the amount is not 1 to 78 digits of base units' };
      const symbol = asset.toUpperCase();
      const decimals = customAssetPrice ? customAssetPrice.decimals : table.assets[symbol]?.decimals;
      if (decimals === undefined) return { unknown: `the asset ${asset} is not in the price table` };
      const rate = table.fx.perUSD[currency];
      if (rate === undefined) return { unknown: `no FX rate from USD to ${currency}` };
      const usd = customAssetPrice ? custom(customAssetPrice) : await usdPrice(symbol);
      if ('unknown' in usd) return usd;
      const age = now() - Date.parse(usd.at);
      if (config.maxAgeMs !== undefined && age > config.maxAgeMs)
        return {
          unknown: `the price of ${symbol} is from ${usd.at}, older than the maximum age of ${config.maxAgeMs / 1000} s`,
        };
      const factors = [decimalOf(usd.priceUSD)];
      if (currency !== 'USD') factors.push(decimalOf(rate));
      return {
        value: multiply(BigInt(amount), decimals, factors),
        currency,
        price: usd.priceUSD,
        priceCurrency: 'USD',
        source: currency === 'USD' ? usd.source : `${usd.source}; FX USD→${currency} ${rate} of ${table.fx.at}`,
        at: usd.at,
      };
    },
  };
}
