/** Settings of reported deposits (environment variables in parentheses); a section of config/index.ts. */
import { durationSetting, httpUrlSetting, type Env } from '../lib/config-values';
import { ConfigError } from '../lib/errors';
import { isUsableWebhookSecret } from '../lib/webhook-signature';

export interface DepositConfig {
  /**
   * How long a deposit no message matches (or only an INCOMPLETE one) is reported to the network again, with backoff
   * (DEPOSIT_MATCH_WINDOW, 1h: originators often add the txHash to their transfer late).
   */
  matchWindowMs: number;
  /** How long an INCOMPLETE match waits for the originator's data before a return is required (DEPOSIT_DATA_DEADLINE, 72h). */
  dataDeadlineMs: number;
  /** The first wait between checks (DEPOSIT_RECHECK_INITIAL, 5s); doubled after each. */
  recheckInitialMs: number;
  /** The longest wait between checks (DEPOSIT_RECHECK_MAX, 5m). */
  recheckMaxMs: number;
  /**
   * Where the custody system takes `deposit.release` and `deposit.return` (CUSTODY_CALLBACK_URL); unset: no callbacks,
   * the custody system reads GET /v1/deposits/:id.
   */
  custodyCallbackUrl?: string;
  /** The `whsec_…` secret the callbacks are signed with, the network's webhook scheme (CUSTODY_CALLBACK_SECRET). */
  custodyCallbackSecret?: string;
}

export function loadDepositConfig(env: Env): DepositConfig {
  const initial = durationSetting(env, 'DEPOSIT_RECHECK_INITIAL', '5s', 100).ms;
  return {
    matchWindowMs: durationSetting(env, 'DEPOSIT_MATCH_WINDOW', '1h').ms,
    dataDeadlineMs: durationSetting(env, 'DEPOSIT_DATA_DEADLINE', '72h').ms,
    recheckInitialMs: initial,
    recheckMaxMs: Math.max(initial, durationSetting(env, 'DEPOSIT_RECHECK_MAX', '5m', 100).ms),
    ...custodyCallback(env),
  };
}

function custodyCallback(env: Env): Pick<DepositConfig, 'custodyCallbackUrl' | 'custodyCallbackSecret'> {
  const url = httpUrlSetting(env, 'CUSTODY_CALLBACK_URL', 'https://custody.internal/travel-rule/deposits');
  if (!url) return {};
  const secret = env.CUSTODY_CALLBACK_SECRET;
  if (!secret || !isUsableWebhookSecret(secret))
    throw new ConfigError(
      'CUSTODY_CALLBACK_SECRET',
      'is missing or not a webhook secret (whsec_ and base64 of at least 16 bytes)',
      'Set it to the secret the custody system verifies the callbacks with, e.g. whsec_ and 32 random bytes in base64',
    );
  return { custodyCallbackUrl: url, custodyCallbackSecret: secret };
}
