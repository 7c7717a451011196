/**
 * Which chain an asset lives on, whether an address belongs to it, and which signature schemes its wallets use.
 * Pure; Bitcoin address decoding (base58check, bech32 for witness v0, bech32m for v1+) is @scure/btc-signer's.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { Address, NETWORK, TEST_NETWORK } from '@scure/btc-signer';
import { ValidationError } from '../lib/errors';
import type { SignatureScheme } from './challenge';

export type Chain = 'ethereum' | 'bitcoin';

const ETHEREUM_SYMBOLS = new Set(['ETH', 'WETH']);
const BITCOIN_SYMBOLS = new Set(['BTC', 'XBT']);

/**
 * The chain of an asset label: a symbol (ETH, BTC, XBT), a token with its standard (USDC-ERC20), a CAIP-19
 * (eip155:1/slip44:60, bip122:000000000019d6689c085ae165831e93/slip44:0) or coingeckoId@network. A bare token
 * symbol such as USDC is on several chains, so it has none here.
 */
export function chainOfAsset(asset: string): Chain | undefined {
  const a = asset.trim().toUpperCase();
  if (ETHEREUM_SYMBOLS.has(a) || /-ERC-?20$/.test(a) || a.startsWith('EIP155:') || /@ETHEREUM$/.test(a))
    return 'ethereum';
  if (BITCOIN_SYMBOLS.has(a) || a.startsWith('BIP122:000000000019D6689C085AE165831E93') || /@BITCOIN$/.test(a))
    return 'bitcoin';
  return undefined;
}

export function schemesFor(chain: Chain): SignatureScheme[] {
  return chain === 'ethereum' ? ['EIP191', 'EIP712'] : ['BIP137', 'BIP322'];
}

/** The chain of `asset`, or a ValidationError naming `field` (the asset's field) when it has none. */
export function chainOfAssetOrThrow(field: string, asset: string): Chain {
  const chain = chainOfAsset(asset);
  if (!chain)
    throw new ValidationError(field, 'must be an asset on Ethereum (ETH, a -ERC20 token, eip155:…) or Bitcoin (BTC)');
  return chain;
}

/** A transaction hash as each chain's explorers and nodes spell it. */
export const TX_HASH: Record<Chain, { pattern: RegExp; rule: string }> = {
  ethereum: { pattern: /^0x[0-9a-fA-F]{64}$/, rule: '0x and 64 hex digits' },
  bitcoin: { pattern: /^[0-9a-fA-F]{64}$/, rule: '64 hex digits (no 0x)' },
};

/** Throws ValidationError naming `field` when `txHash` is not a transaction hash of the chain. */
export function assertTxHash(field: string, chain: Chain, txHash: string): void {
  const hash = TX_HASH[chain];
  if (!hash.pattern.test(txHash)) throw new ValidationError(field, `must be ${hash.rule} for an asset on ${chain}`);
}

/** Throws ValidationError naming `field` when the address is not an address of the asset's chain. */
export function assertAddressForAsset(field: string, asset: string, address: string): void {
  const chain = chainOfAsset(asset);
  if (!chain) throw new ValidationError(field, `no ownership proof exists for addresses of the asset ${asset}`);
  if (chain === 'ethereum') assertEthereumAddress(field, address);
  else decodeBitcoinAddress(field, address);
}

export function assertEthereumAddress(field: string, address: string): void {
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new ValidationError(field, 'must be an Ethereum address: 0x and 40 hex characters');
  const hex = address.slice(2);
  // All lower or all upper case carries no checksum; mixed case is EIP-55 and must match it.
  if (hex !== hex.toLowerCase() && hex !== hex.toUpperCase() && toChecksumAddress(address) !== address)
    throw new ValidationError(field, 'has a wrong EIP-55 checksum (mixed case that does not match)');
}

/** The EIP-55 spelling of an Ethereum address. */
export function toChecksumAddress(address: string): string {
  const hex = address.slice(2).toLowerCase();
  const hash = bytesToHex(keccak_256(utf8ToBytes(hex)));
  let out = '0x';
  for (let i = 0; i < hex.length; i++) out += parseInt(hash[i]!, 16) >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  return out;
}

const REGTEST_NETWORK = { ...TEST_NETWORK, bech32: 'bcrt' };
export const BITCOIN_NETWORKS = { mainnet: NETWORK, testnet: TEST_NETWORK, regtest: REGTEST_NETWORK } as const;

export type BitcoinAddress = ReturnType<ReturnType<typeof Address>['decode']>;

/** The decoded output script of a Bitcoin address on mainnet, testnet/signet or regtest. */
export function decodeBitcoinAddress(field: string, address: string): BitcoinAddress {
  if (typeof address === 'string' && address.length <= 100) {
    for (const network of Object.values(BITCOIN_NETWORKS)) {
      try {
        return Address(network).decode(address);
      } catch {
        // another network's prefix, or not an address at all: the error below names the rule
      }
    }
  }
  throw new ValidationError(
    field,
    'must be a Bitcoin address (base58check P2PKH/P2SH, bech32 P2WPKH/P2WSH, bech32m P2TR; mainnet, testnet or regtest)',
  );
}
