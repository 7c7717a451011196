import { loadWebhookConfig } from '../../../webhooks/config';
import { ConfigError } from '../../../lib/errors';
import { generateWebhookSecret } from '../../../lib/webhook-signature';

/** A secret shorter than verification needs used to pass start-up and then fail every webhook. */
describe('webhook signing secrets are checked at start-up, one rule for both webhooks', () => {
  const refused = (env: Record<string, string>, setting: string) => {
    let error: unknown;
    try {
      loadWebhookConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).setting).toBe(setting);
    expect((error as ConfigError).message).toMatch(/at least 16 bytes/);
  };

  it('refuses a per-endpoint secret of 8 characters (6 bytes of key), naming the variable', () => {
    refused(
      { NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': '12345678' }) },
      'NOTIFICATION_WEBHOOK_SECRETS',
    );
    refused(
      {
        NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({
          'did:ethr:0xabc': `whsec_${Buffer.alloc(15).toString('base64')}`,
        }),
      },
      'NOTIFICATION_WEBHOOK_SECRETS',
    );
  });

  it('refuses a short single secret, naming the variable', () => {
    refused({ NOTIFICATION_WEBHOOK_SECRET: 'whsec_abcdefgh' }, 'NOTIFICATION_WEBHOOK_SECRET');
  });

  it('refuses an address-webhook secret of fewer than 16 bytes, and anything but a JSON object', () => {
    refused(
      { ADDRESS_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': 'fifteen-chars!!' }) },
      'ADDRESS_WEBHOOK_SECRETS',
    );
    expect(() => loadWebhookConfig({ ADDRESS_WEBHOOK_SECRETS: '["x"]' })).toThrow(
      /^ADDRESS_WEBHOOK_SECRETS: is not a JSON object/,
    );
    expect(() => loadWebhookConfig({ NOTIFICATION_WEBHOOK_SECRETS: '{' })).toThrow(
      /^NOTIFICATION_WEBHOOK_SECRETS: is not valid JSON/,
    );
  });

  it('accepts the secrets the network issues', () => {
    const secret = generateWebhookSecret();
    const config = loadWebhookConfig({
      NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': secret }),
      NOTIFICATION_WEBHOOK_SECRET: secret,
      ADDRESS_WEBHOOK_SECRETS: JSON.stringify({ 'did:ethr:0xabc': 'sixteen-chars!!!' }),
    });
    expect(config).toEqual({
      notification: { 'did:ethr:0xabc': secret },
      notificationDefault: secret,
      address: { 'did:ethr:0xabc': 'sixteen-chars!!!' },
      addressTimestamp: 'required',
    });
  });
});
