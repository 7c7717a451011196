/**
 * The network's side of the jurisdiction rules: the same table as the orchestrator's (data/jurisdictions.json) and the
 * same embedded prices (data/prices.json), read here by the sandbox itself, since it imports nothing of the
 * orchestrator's capabilities (README, Where things live). The shapes below are the parts of those files it reads.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Rules {
  /** ISO 3166-1 alpha-2, or `EU` (with `countryCodes`) or `FATF`. */
  countryCode: string;
  countryCodes?: string[];
  name: string;
  currency: string;
  threshold: number;
  source: string;
  confidence: string;
  fieldsAboveThreshold: string[];
  fieldsBelowThreshold: string[];
  selfHostedProof: { required: boolean; aboveAmount: number | null; source: string; confidence: string };
}

export interface RulesTable {
  version: string;
  fatf: Rules;
  jurisdictions: Rules[];
}

interface PriceTable {
  source: string;
  assets: Record<string, { decimals: number; priceUSD: number; at: string }>;
  fx: { at: string; perUSD: Record<string, number> };
}

/** data/<name> beside the sources or beside the build. */
function readData<T>(name: string): T {
  const file = [join(__dirname, '..', '..', 'data', name), join(__dirname, '..', '..', '..', 'data', name)].find((f) =>
    existsSync(f),
  );
  if (!file) throw new Error(`data/${name}: not found`);
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

let rules: RulesTable | undefined;
let prices: PriceTable | undefined;

export const rulesTable = (): RulesTable => (rules ??= readData<RulesTable>('jurisdictions.json'));
const priceTable = (): PriceTable => (prices ??= readData<PriceTable>('prices.json'));

/** A country's own rules (an EEA member's are the EU's), or undefined when the table has none. */
export function rulesOf(countryCode: string | undefined): Rules | undefined {
  if (!countryCode) return undefined;
  const code = countryCode.toUpperCase();
  return rulesTable().jurisdictions.find((j) => j.countryCode === code || j.countryCodes?.includes(code));
}

export const rulesOrFatf = (countryCode: string | undefined): Rules => rulesOf(countryCode) ?? rulesTable().fatf;

/** The caller's own price of one whole unit (TransactionCreateRequest's CustomAssetPrice). */
export interface CustomAssetPrice {
  priceUSD: number;
  decimals: number;
}

export type Priced = { value: number; currency: string } | { unknown: string };

/**
 * The amount (base units) in `currency`: the request's customAssetPrice, else the price table's, with FX from USD.
 * The request's transactionAssetDecimals wins over the table's decimals. No price → `{unknown}`, never a guess.
 */
export function price(
  asset: string,
  amount: string,
  currency: string,
  opts: { customAssetPrice?: CustomAssetPrice; decimals?: number } = {},
): Priced {
  const table = priceTable();
  const row = table.assets[asset.trim().toUpperCase()];
  const priceUSD = opts.customAssetPrice?.priceUSD ?? row?.priceUSD;
  const decimals = opts.customAssetPrice?.decimals ?? opts.decimals ?? row?.decimals;
  if (priceUSD === undefined || decimals === undefined) return { unknown: `no price for ${asset}` };
  const rate = table.fx.perUSD[currency];
  if (rate === undefined) return { unknown: `no FX rate from USD to ${currency}` };
  const units = BigInt(amount);
  const scale = 10n ** BigInt(decimals);
  // Whole units and the fraction apart, so that a long amount keeps its precision where it matters.
  const whole = Number(units / scale) + Number(units % scale) / Number(scale);
  return { value: whole * priceUSD * rate, currency };
}
