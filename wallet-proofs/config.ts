/** Settings of wallet ownership proofs (environment variables in parentheses); a section of config/index.ts. */
import { ConfigError } from '../lib/errors';
import { durationSetting, intSetting, type Env } from '../lib/config-values';
import type { Chain } from './addresses';

export interface WalletProofConfig {
  /** A verified proof is reused this many days after verification (WALLET_PROOF_VALID_DAYS, 365). */
  validDays: number;
  /** How long a signature challenge may be answered (WALLET_PROOF_CHALLENGE_TTL, 1h). */
  challengeTtl: string;
  challengeTtlMs: number;
  /** How long the small deposit may take to arrive (WALLET_PROOF_DEPOSIT_DEADLINE, 48h). */
  depositDeadline: string;
  depositDeadlineMs: number;
  /** A screenshot or declaration waits this long for compliance before escalating (WALLET_PROOF_REVIEW_DEADLINE, 24h). */
  reviewDeadline: string;
  reviewDeadlineMs: number;
  /** After escalation, how much longer it waits before it expires (WALLET_PROOF_REVIEW_EXPIRY, 14d). */
  reviewExpiryMs: number;
  /** The group's deposit address per chain for small-deposit tests (WALLET_PROOF_DEPOSIT_ADDRESSES, JSON; none: no test). */
  depositAddresses: Partial<Record<Chain, string>>;
  /** The fiat value a test deposit is about, in USD (WALLET_PROOF_DEPOSIT_USD, 1). */
  depositUsd: number;
}

export function loadWalletProofConfig(env: Env): WalletProofConfig {
  const ttl = durationSetting(env, 'WALLET_PROOF_CHALLENGE_TTL', '1h');
  const deposit = durationSetting(env, 'WALLET_PROOF_DEPOSIT_DEADLINE', '48h');
  const review = durationSetting(env, 'WALLET_PROOF_REVIEW_DEADLINE', '24h');
  const usd = Number(env.WALLET_PROOF_DEPOSIT_USD || '1');
  if (!(usd > 0 && usd <= 100))
    throw new ConfigError(
      'WALLET_PROOF_DEPOSIT_USD',
      `"${env.WALLET_PROOF_DEPOSIT_USD}" is not in (0, 100]`,
      'Set it to about 1',
    );
  return {
    validDays: intSetting(env, 'WALLET_PROOF_VALID_DAYS', 365, 1, 3650, 'days'),
    challengeTtl: ttl.text,
    challengeTtlMs: ttl.ms,
    depositDeadline: deposit.text,
    depositDeadlineMs: deposit.ms,
    reviewDeadline: review.text,
    reviewDeadlineMs: review.ms,
    reviewExpiryMs: durationSetting(env, 'WALLET_PROOF_REVIEW_EXPIRY', '14d').ms,
    depositAddresses: depositAddresses(env),
    depositUsd: usd,
  };
}

function depositAddresses(env: Env): Partial<Record<Chain, string>> {
  const raw = env.WALLET_PROOF_DEPOSIT_ADDRESSES;
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const ok =
    parsed &&
    typeof parsed === 'object' &&
    Object.entries(parsed).every(([k, v]) => (k === 'ethereum' || k === 'bitcoin') && typeof v === 'string');
  if (!ok)
    throw new ConfigError(
      'WALLET_PROOF_DEPOSIT_ADDRESSES',
      'is not a JSON object of chain to address',
      'Set it like {"ethereum":"0x…","bitcoin":"bc1…"}',
    );
  return parsed as Partial<Record<Chain, string>>;
}
