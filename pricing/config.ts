/** Settings of pricing (environment variables in parentheses); a section of config/index.ts. */
import { durationSetting, httpUrlSetting, type Env } from '../lib/config-values';

export interface PricingConfig {
  /**
   * A JSON price table replacing the embedded data/prices.json (PRICE_TABLE_FILE; same shape). It always gives the
   * assets' decimals and the FX rates; it gives the prices too unless PRICE_API_URL is set.
   */
  tableFile?: string;
  /**
   * An HTTP price API the operator names (PRICE_API_URL; unset: the table's prices). Called as
   * `GET <url>?asset=ETH`, answering `{"priceUSD": 3012.5, "at": "2026-11-28T06:00:00Z"}`.
   */
  apiUrl?: string;
  /** How long a call to the price API may take before the price is unknown (PRICE_API_TIMEOUT, default 2s). */
  apiTimeoutMs: number;
  /** How long a price from the API is reused (PRICE_CACHE, default 60s). */
  cacheMs: number;
  /**
   * A price (or FX rate) observed longer ago than this is unknown, never used (PRICE_MAX_AGE; default: 1h with
   * PRICE_API_URL, unlimited for the table, whose prices are reference values with their stated time).
   */
  maxAgeMs?: number;
}

export function loadPricingConfig(env: Env): PricingConfig {
  const tableFile = env.PRICE_TABLE_FILE?.trim() || undefined;
  const apiUrl = httpUrlSetting(env, 'PRICE_API_URL', 'https://prices.example.com/v1/price');
  const maxAgeRaw = env.PRICE_MAX_AGE?.trim();
  return {
    tableFile,
    apiUrl,
    apiTimeoutMs: durationSetting(env, 'PRICE_API_TIMEOUT', '2s', 10).ms,
    cacheMs: durationSetting(env, 'PRICE_CACHE', '60s', 0).ms,
    maxAgeMs: maxAgeRaw || apiUrl ? durationSetting(env, 'PRICE_MAX_AGE', '1h').ms : undefined,
  };
}
