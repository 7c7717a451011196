/**
 * How many decimals an asset's base unit has, for `transactionAssetDecimals` when the request gives none: `tx/list`
 * answers TransactionResolved, where the spec requires it. The network takes it from its own asset list; the sandbox
 * knows the common assets below, by symbol or by their main CAIP-19 ids, and assumes 18 (ether and most EVM tokens)
 * for any other: a client that cares sends transactionAssetDecimals, which is always kept.
 */
const BY_SYMBOL: Readonly<Record<string, number>> = {
  BTC: 8,
  XBT: 8,
  BCH: 8,
  LTC: 8,
  DOGE: 8,
  DASH: 8,
  ZEC: 8,
  ETH: 18,
  ETC: 18,
  MATIC: 18,
  POL: 18,
  BNB: 18,
  AVAX: 18,
  DAI: 18,
  LINK: 18,
  UNI: 18,
  ARB: 18,
  OP: 18,
  USDC: 6,
  USDT: 6,
  XRP: 6,
  ADA: 6,
  TRX: 6,
  ALGO: 6,
  XTZ: 6,
  ATOM: 6,
  XLM: 7,
  SOL: 9,
  TON: 9,
  DOT: 10,
  EOS: 4,
};

const BY_CAIP19: Readonly<Record<string, number>> = {
  'bip122:000000000019d6689c085ae165831e93/slip44:0': 8,
  'eip155:1/slip44:60': 18,
  'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48': 6,
  'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7': 6,
};

export const DEFAULT_ASSET_DECIMALS = 18;

/** The decimals of the asset's text (symbol, CAIP-19 id, or `coingeckoId@network`). */
export function assetDecimals(assetText: string): number {
  // Own keys only: `constructor` would find Object's.
  const symbol = assetText.trim().toUpperCase();
  if (Object.hasOwn(BY_SYMBOL, symbol)) return BY_SYMBOL[symbol]!;
  const caip19 = assetText.trim().toLowerCase();
  return Object.hasOwn(BY_CAIP19, caip19) ? BY_CAIP19[caip19]! : DEFAULT_ASSET_DECIMALS;
}
