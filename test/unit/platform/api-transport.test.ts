import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiHttpsOptions, loadApiTransportConfig } from '../../../lib/api-transport';
import { ConfigError } from '../../../lib/errors';

describe("the API's HTTPS (TLS_CERT_FILE, TLS_KEY_FILE)", () => {
  const plain = loadApiTransportConfig({});

  it('serves plain HTTP on loopback only', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.53'])
      expect(apiHttpsOptions(host, plain)).toBeUndefined();
    for (const host of ['0.0.0.0', '::', '10.0.0.7', 'api.bank.example']) {
      expect(() => apiHttpsOptions(host, plain)).toThrow(ConfigError);
      expect(() => apiHttpsOptions(host, plain)).toThrow(
        /^TLS_CERT_FILE: and TLS_KEY_FILE are unset while the API listens on /,
      );
    }
  });

  it('reads the files, TLS 1.2 at least, and names the variable of a file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-tls-unit-'));
    writeFileSync(join(dir, 'cert.pem'), 'CERT');
    writeFileSync(join(dir, 'key.pem'), 'KEY');
    const tls = loadApiTransportConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') });
    const options = apiHttpsOptions('0.0.0.0', tls)!;
    expect({ cert: options.cert.toString(), key: options.key.toString(), minVersion: options.minVersion }).toEqual({
      cert: 'CERT',
      key: 'KEY',
      minVersion: 'TLSv1.2',
    });
    const missing = loadApiTransportConfig({
      TLS_CERT_FILE: join(dir, 'cert.pem'),
      TLS_KEY_FILE: join(dir, 'nope.pem'),
    });
    expect(() => apiHttpsOptions('127.0.0.1', missing)).toThrow(/^TLS_KEY_FILE: cannot read .*nope\.pem \(ENOENT\)/);
  });
});

describe('TLS terminated by a proxy in front (TLS_TERMINATED_BY_PROXY, with TRUST_PROXY)', () => {
  it('lets the API listen on plain HTTP off loopback, and only with the proxy it trusts named', () => {
    const behindProxy = loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: '1', TRUST_PROXY: '10.0.0.0/8' });
    expect(behindProxy).toMatchObject({ tlsTerminatedByProxy: true, trustProxy: ['10.0.0.0/8'] });
    for (const host of ['0.0.0.0', '::', '10.0.0.7']) expect(apiHttpsOptions(host, behindProxy)).toBeUndefined();
    expect(
      loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: 'true', TRUST_PROXY: '10.0.0.5' }).tlsTerminatedByProxy,
    ).toBe(true);
    for (const off of ['', '0', 'false'])
      expect(loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: off }).tlsTerminatedByProxy).toBeUndefined();
    // TRUST_PROXY alone changes nothing about TLS.
    expect(() => apiHttpsOptions('0.0.0.0', loadApiTransportConfig({ TRUST_PROXY: '10.0.0.5' }))).toThrow(
      /TLS_TERMINATED_BY_PROXY=1 and TRUST_PROXY when a proxy/,
    );
  });

  it('is refused without TRUST_PROXY, naming both variables, and for a value that is not a flag', () => {
    expect(() => loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: '1' })).toThrow(ConfigError);
    expect(() => loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: '1' })).toThrow(
      /^TLS_TERMINATED_BY_PROXY: is set without TRUST_PROXY\. Set TRUST_PROXY to /,
    );
    expect(() => loadApiTransportConfig({ TLS_TERMINATED_BY_PROXY: 'yes', TRUST_PROXY: '10.0.0.5' })).toThrow(
      /^TLS_TERMINATED_BY_PROXY: "yes" is neither 1 nor 0/,
    );
  });
});
