/**
 * Signing secrets of the webhooks the network calls (environment variables in parentheses); a section of config/index.ts.
 * Both kinds are HMAC keys, and a key shorter than 16 bytes is refused at start-up rather than failing every delivery.
 */
import { ConfigError } from '../lib/errors';
import { secretsSetting, type Env, type SecretRule } from '../lib/config-values';
import { isUsableWebhookSecret } from '../lib/webhook-signature';

export interface WebhookConfig {
  /**
   * The notification webhook's secrets (NOTIFICATION_WEBHOOK_SECRETS): a JSON object from an endpoint name (usually the
   * VASP DID the endpoint is registered for, used as `/webhooks/notification/<name>`) to its `whsec_…` secret.
   */
  notification: Record<string, string>;
  /** One notification secret for every endpoint not named above (NOTIFICATION_WEBHOOK_SECRET). */
  notificationDefault?: string;
  /** The address webhook's secret per subsidiary: JSON {vaspDID: secret} (ADDRESS_WEBHOOK_SECRETS). */
  address: Record<string, string>;
  /**
   * ADDRESS_WEBHOOK_TIMESTAMP: `required` (the default) accepts only address queries with a fresh timestamped signature
   * (lib/address-webhook-signature.ts), so a captured query cannot be replayed; `optional` also accepts the network's
   * own format alone, which has no timestamp, for a network that sends nothing else.
   */
  addressTimestamp?: 'required' | 'optional';
}

export const MIN_WEBHOOK_KEY_BYTES = 16;

const NOTIFICATION: SecretRule = {
  usable: isUsableWebhookSecret,
  describe: `a webhook signing secret: whsec_ followed by base64 of at least ${MIN_WEBHOOK_KEY_BYTES} bytes`,
  example: 'whsec_…',
};

/** The address webhook signs with the secret's own bytes (lib/address-webhook-signature.ts). */
const ADDRESS: SecretRule = {
  usable: (s) => Buffer.byteLength(s, 'utf8') >= MIN_WEBHOOK_KEY_BYTES,
  describe: `a signing secret of at least ${MIN_WEBHOOK_KEY_BYTES} bytes`,
  example: '<secret>',
};

export function loadWebhookConfig(env: Env): WebhookConfig {
  const notificationDefault = env.NOTIFICATION_WEBHOOK_SECRET || undefined;
  if (notificationDefault !== undefined && !NOTIFICATION.usable(notificationDefault)) {
    throw new ConfigError(
      'NOTIFICATION_WEBHOOK_SECRET',
      `is not ${NOTIFICATION.describe}`,
      'Set it to the secret POST /webhook answered (whsec_…)',
    );
  }
  const addressTimestamp = (env.ADDRESS_WEBHOOK_TIMESTAMP || 'required').trim();
  if (addressTimestamp !== 'required' && addressTimestamp !== 'optional') {
    throw new ConfigError(
      'ADDRESS_WEBHOOK_TIMESTAMP',
      `"${addressTimestamp}" is neither required nor optional`,
      'Set required (replays refused), or optional for a network that signs address queries without a timestamp',
    );
  }
  return {
    addressTimestamp,
    notification: secretsSetting(env, 'NOTIFICATION_WEBHOOK_SECRETS', NOTIFICATION),
    ...(notificationDefault ? { notificationDefault } : {}),
    address: secretsSetting(env, 'ADDRESS_WEBHOOK_SECRETS', ADDRESS),
  };
}
