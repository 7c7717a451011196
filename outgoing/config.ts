/** Settings of outgoing transfers (environment variables in parentheses); a section of config/index.ts. */
import { ConfigError } from '../lib/errors';
import { durationSetting, httpUrlSetting, type Env } from '../lib/config-values';

export type NoKeyMode = 'originator-only' | 'escrow';

export interface TransferConfig {
  /** How long a transfer waits for the counterparty's final answer (TRANSFER_ANSWER_DEADLINE, default 24h). */
  answerDeadlineMs: number;
  /** Fallback polling of `GET /tx/info` while waiting, in case a webhook is lost (TRANSFER_POLL_INTERVAL, default 5m). */
  pollIntervalMs: number;
  /**
   * What to encrypt to when the beneficiary VASP has no published `pii_didkey` (TRANSFER_NO_KEY_MODE):
   * `originator-only` (default; the agent's documented rule) or `escrow` (pseudo end-to-end: the beneficiary's
   * service-generated escrow key, so it can read the data in the network's UI).
   */
  noKeyMode: NoKeyMode;
  /** Internal URL that receives each transfer's final status (TRANSFER_CALLBACK_URL; unset: no callback). */
  callbackUrl?: string;
  /** How long directory answers (`pii_didkey`, escrow keys) are reused (TRANSFER_DIRECTORY_CACHE, default 60s; 0 = off). */
  directoryCacheMs: number;
}

export function loadTransferConfig(env: Env): TransferConfig {
  const noKeyMode = (env.TRANSFER_NO_KEY_MODE || 'originator-only').trim();
  if (noKeyMode !== 'originator-only' && noKeyMode !== 'escrow') {
    throw new ConfigError(
      'TRANSFER_NO_KEY_MODE',
      `"${noKeyMode}" is not a mode`,
      'Set it to originator-only (default) or escrow',
    );
  }
  return {
    answerDeadlineMs: durationSetting(env, 'TRANSFER_ANSWER_DEADLINE', '24h', 100).ms,
    pollIntervalMs: durationSetting(env, 'TRANSFER_POLL_INTERVAL', '5m', 100).ms,
    noKeyMode,
    callbackUrl: httpUrlSetting(env, 'TRANSFER_CALLBACK_URL', 'https://ledger.internal/travel-rule/callback'),
    directoryCacheMs:
      env.TRANSFER_DIRECTORY_CACHE?.trim() === '0' ? 0 : durationSetting(env, 'TRANSFER_DIRECTORY_CACHE', '60s').ms,
  };
}
