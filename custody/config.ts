/** Where the custody system takes its callbacks (environment variables in parentheses); a section of config/index.ts. */
import { httpUrlSetting, type Env } from '../lib/config-values';
import { ConfigError } from '../lib/errors';
import { isUsableWebhookSecret } from '../lib/webhook-signature';

export interface CustodyConfig {
  /**
   * Where the custody system takes `deposit.release`, `deposit.return`, `transfer.release` and `transfer.halt`
   * (CUSTODY_CALLBACK_URL); unset: no callbacks, the custody system reads GET /v1/deposits/:id and /v1/transfers/:id.
   */
  callbackUrl?: string;
  /** The `whsec_…` secret the callbacks are signed with, the network's webhook scheme (CUSTODY_CALLBACK_SECRET). */
  callbackSecret?: string;
}

export function loadCustodyConfig(env: Env): CustodyConfig {
  const url = httpUrlSetting(env, 'CUSTODY_CALLBACK_URL', 'https://custody.internal/travel-rule/callbacks');
  if (!url) return {};
  const secret = env.CUSTODY_CALLBACK_SECRET;
  if (!secret || !isUsableWebhookSecret(secret))
    throw new ConfigError(
      'CUSTODY_CALLBACK_SECRET',
      'is missing or not a webhook secret (whsec_ and base64 of at least 16 bytes)',
      'Set it to the secret the custody system verifies the callbacks with, e.g. whsec_ and 32 random bytes in base64',
    );
  return { callbackUrl: url, callbackSecret: secret };
}
