import { loadTransferConfig } from '../../../outgoing/config';
import { ConfigError } from '../../../lib/errors';
import { generateWebhookSecret } from '../../../lib/webhook-signature';

/** A secret shorter than verification needs used to pass start-up and then fail every webhook (issue 15, item 14). */
describe('webhook signing secrets are checked at start-up', () => {
  const refused = (env: Record<string, string>, setting: string) => {
    let error: unknown;
    try {
      loadTransferConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).setting).toBe(setting);
    expect((error as ConfigError).message).toMatch(/at least 16 bytes/);
  };

  it('refuses a per-endpoint secret of 8 characters (6 bytes of key), naming the variable', () => {
    refused({ NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': '12345678' }) }, 'NOTIFICATION_WEBHOOK_SECRETS');
    refused({ NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': `whsec_${Buffer.alloc(15).toString('base64')}` }) }, 'NOTIFICATION_WEBHOOK_SECRETS');
  });

  it('refuses a short single secret, naming the variable', () => {
    refused({ NOTIFICATION_WEBHOOK_SECRET: 'whsec_abcdefgh' }, 'NOTIFICATION_WEBHOOK_SECRET');
  });

  it('accepts the secrets the network issues', () => {
    const secret = generateWebhookSecret();
    const config = loadTransferConfig({ NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': secret }), NOTIFICATION_WEBHOOK_SECRET: secret });
    expect(config.webhookSecrets['did:ethr:0xabc']).toBe(secret);
    expect(config.webhookDefaultSecret).toBe(secret);
  });
});
