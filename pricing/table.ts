/**
 * The price table (data/prices.json, or the operator's PRICE_TABLE_FILE): per asset its decimals and a USD price with
 * the time it was observed, and FX rates from USD. Checked once when pricing is created, so a bad file stops start-up.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TableAsset {
  decimals: number;
  priceUSD: number;
  at: string;
}

export interface PriceTable {
  source: string;
  assets: Record<string, TableAsset>;
  fx: { at: string; perUSD: Record<string, number> };
}

/** data/prices.json beside the sources (pricing/ → ../data) or beside the build (dist/pricing/ → ../../data). */
export function embeddedTable(): PriceTable {
  const file = [join(__dirname, '..', 'data', 'prices.json'), join(__dirname, '..', '..', 'data', 'prices.json')].find(
    (f) => existsSync(f),
  );
  if (!file) throw new Error('price table data/prices.json: not found; set PRICE_TABLE_FILE');
  return readTable(file);
}

export function readTable(file: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`price table ${file}: not readable JSON (${(e as Error).message})`);
  }
  return parseTable(raw, file);
}

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
const isPrice = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

export function parseTable(raw: unknown, name: string): PriceTable {
  const fail = (why: string): never => {
    throw new Error(`price table ${name}: ${why}`);
  };
  const t = raw as { source?: unknown; assets?: unknown; fx?: { at?: unknown; perUSD?: unknown } };
  if (!t || typeof t !== 'object' || !t.assets || typeof t.assets !== 'object') fail('no "assets" object');
  const assets: Record<string, TableAsset> = {};
  for (const [symbol, entry] of Object.entries(t.assets as Record<string, Partial<TableAsset>>)) {
    if (!Number.isInteger(entry?.decimals) || entry.decimals! < 0 || entry.decimals! > 36)
      fail(`${symbol}.decimals must be an integer from 0 to 36`);
    if (!isPrice(entry.priceUSD)) fail(`${symbol}.priceUSD must be a non-negative number`);
    if (!isTime(entry.at)) fail(`${symbol}.at must be an ISO 8601 time`);
    assets[symbol.toUpperCase()] = { decimals: entry.decimals!, priceUSD: entry.priceUSD!, at: entry.at! };
  }
  if (!t.fx || !isTime(t.fx.at) || !t.fx.perUSD || typeof t.fx.perUSD !== 'object') fail('no "fx" {at, perUSD}');
  const perUSD: Record<string, number> = { USD: 1 };
  for (const [currency, rate] of Object.entries(t.fx!.perUSD as Record<string, unknown>)) {
    if (!/^[A-Z]{3}$/.test(currency) || !isPrice(rate) || rate === 0)
      fail(`fx.perUSD.${currency} must be an ISO 4217 code with a positive rate`);
    perUSD[currency] = rate as number;
  }
  return {
    source: typeof t.source === 'string' ? t.source : name,
    assets,
    fx: { at: t.fx!.at as string, perUSD },
  };
}
