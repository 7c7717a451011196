import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../config';
import { ConfigError } from '../../../lib/errors';
import { loadTemporalConnectionConfig, temporalConnectOptions } from '../../../lib/temporal/connection-config';

describe('Temporal connection settings (TEMPORAL_TLS_*, TEMPORAL_API_KEY)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const cert = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
  const key = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
  const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');

  it('is plaintext with nothing set, as the development server speaks', () => {
    const c = loadConfig({});
    expect(c.temporal.tls).toBeUndefined();
    expect(c.temporal.apiKey).toBeUndefined();
    expect(temporalConnectOptions(c.temporal)).toEqual({});
  });

  it("maps mTLS files and the server name into the connection options, with the files' bytes", () => {
    const c = loadConfig({
      TEMPORAL_ADDRESS: 'bank.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'bank.a1b2c',
      TEMPORAL_TLS_CERT_FILE: cert,
      TEMPORAL_TLS_KEY_FILE: key,
      TEMPORAL_TLS_CA_FILE: ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(c.temporal).toMatchObject({
      address: 'bank.a1b2c.tmprl.cloud:7233',
      namespace: 'bank.a1b2c',
      tls: { clientCertFile: cert, clientKeyFile: key, caFile: ca, serverName: 'temporal.internal' },
    });
    const options = temporalConnectOptions(c.temporal);
    expect(options.apiKey).toBeUndefined();
    expect(options.tls!.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(options.tls!.serverRootCACertificate!).toString()).toContain('ca');
    expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toContain('client');
    expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toContain('PRIVATE KEY');
  });

  it("an API key turns TLS on with the system's CAs (Temporal Cloud), and so does TEMPORAL_TLS=1", () => {
    const cloud = loadTemporalConnectionConfig(
      { TEMPORAL_API_KEY: 'secret-key' },
      'eu-west-1.aws.api.temporal.io:7233',
    );
    expect(cloud).toEqual({ tls: {}, apiKey: 'secret-key' });
    expect(temporalConnectOptions(cloud)).toEqual({ tls: {}, apiKey: 'secret-key' });
    expect(temporalConnectOptions(loadTemporalConnectionConfig({ TEMPORAL_TLS: '1' }, 'temporal.bank:7233'))).toEqual({
      tls: {},
    });
    // On loopback (a local proxy, the dev server) the key may go without TLS when asked.
    expect(loadTemporalConnectionConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: '0' }, '127.0.0.1:7233')).toEqual({
      apiKey: 'k',
    });
  });

  it.each([
    [{ TEMPORAL_TLS_CERT_FILE: cert }, /^TEMPORAL_TLS_KEY_FILE: is unset while TEMPORAL_TLS_CERT_FILE is set/],
    [{ TEMPORAL_TLS_KEY_FILE: key }, /^TEMPORAL_TLS_CERT_FILE: is unset while TEMPORAL_TLS_KEY_FILE is set/],
    [{ TEMPORAL_TLS: '0', TEMPORAL_TLS_CA_FILE: ca }, /^TEMPORAL_TLS: is off while TEMPORAL_TLS_CA_FILE is set/],
    [
      { TEMPORAL_TLS: '0', TEMPORAL_API_KEY: 'k', TEMPORAL_ADDRESS: 'temporal.bank:7233' },
      /^TEMPORAL_TLS: is off while TEMPORAL_API_KEY is set/,
    ],
    [{ TEMPORAL_TLS: 'maybe' }, /^TEMPORAL_TLS: "maybe" is not on or off/],
  ])('refuses %j with one ConfigError line', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('names the variable whose file cannot be read, when connecting', () => {
    const c = loadConfig({ TEMPORAL_TLS_CA_FILE: join(dir, 'missing.pem') });
    expect(() => temporalConnectOptions(c.temporal)).toThrow(
      /^TEMPORAL_TLS_CA_FILE: cannot read .*missing\.pem \(ENOENT\)/,
    );
  });
});
