import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiHttpsOptions, loadApiTransportConfig } from '../../../lib/api-transport';
import { ConfigError } from '../../../lib/errors';

describe('the API\'s HTTPS (TLS_CERT_FILE, TLS_KEY_FILE)', () => {
  const plain = loadApiTransportConfig({});

  it('serves plain HTTP on loopback only', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.53']) expect(apiHttpsOptions(host, plain)).toBeUndefined();
    for (const host of ['0.0.0.0', '::', '10.0.0.7', 'api.bank.example']) {
      expect(() => apiHttpsOptions(host, plain)).toThrow(ConfigError);
      expect(() => apiHttpsOptions(host, plain)).toThrow(/^TLS_CERT_FILE: and TLS_KEY_FILE are unset while the API listens on /);
    }
  });

  it('reads the files, TLS 1.2 at least, and names the variable of a file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-tls-unit-'));
    writeFileSync(join(dir, 'cert.pem'), 'CERT');
    writeFileSync(join(dir, 'key.pem'), 'KEY');
    const tls = loadApiTransportConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') });
    const options = apiHttpsOptions('0.0.0.0', tls)!;
    expect({ cert: options.cert.toString(), key: options.key.toString(), minVersion: options.minVersion }).toEqual({ cert: 'CERT', key: 'KEY', minVersion: 'TLSv1.2' });
    const missing = loadApiTransportConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'nope.pem') });
    expect(() => apiHttpsOptions('127.0.0.1', missing)).toThrow(/^TLS_KEY_FILE: cannot read .*nope\.pem \(ENOENT\)/);
  });
});
