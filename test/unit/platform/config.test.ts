import { loadConfig } from '../../../lib/config';
import { ConfigError } from '../../../lib/errors';
import { toFieldPath } from '../../../lib/validation';

describe('loadConfig', () => {
  it('has working defaults with nothing set: loopback, 3000/4000, the embedded sandbox', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', apiPort: 3000, sandboxPort: 4000, network: undefined });
    expect(c.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'travel-rule', uiPort: 8233 });
    expect(c.publicApiUrl).toBe('http://127.0.0.1:3000');
  });

  it('reads the agent variables, deriving the audiences the way the agent does', () => {
    const c = loadConfig({ CLIENT_ID: 'id', CLIENT_SECRET: 's', AUTH_URL: 'https://auth.notabene.id', BASE_URL: 'https://api.notabene.dev/', BASEURL_PII: 'https://pii.notabene.dev' });
    expect(c.network).toEqual({
      authUrl: 'https://auth.notabene.id', audience: 'https://api.notabene.dev', baseUrl: 'https://api.notabene.dev',
      audiencePii: 'https://pii.notabene.dev', baseUrlPii: 'https://pii.notabene.dev', clientId: 'id', clientSecret: 's',
    });
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: "abc" is not a TCP port/],
    [{ PORT: '70000' }, /^PORT:/],
    [{ BASE_URL: 'ftp://x' , CLIENT_ID: 'a', CLIENT_SECRET: 'b', AUTH_URL: 'https://a' }, /^BASE_URL: "ftp:\/\/x" is not an http\(s\) URL/],
    [{ CLIENT_ID: 'a' }, /^CLIENT_SECRET: is unset while CLIENT_ID is set/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: is not a postgres:\/\/ URL/],
    [{ GATEWAY_VASP_DID: 'gateway' }, /^GATEWAY_VASP_DID: "gateway" is not a DID/],
    [{ GATEWAY_VASP_DID: 'did:ethr:0x1', SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2,did:ethr:0x1' }, /contains the gateway DID/],
  ])('rejects %j with one ConfigError line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('toFieldPath', () => {
  it('renders JSON pointers as the dotted paths error bodies use', () => {
    expect(toFieldPath('/originator/originatorPersons/0/naturalPerson')).toBe('originator.originatorPersons[0].naturalPerson');
    expect(toFieldPath('/0/address', 'addresses')).toBe('addresses[0].address');
    expect(toFieldPath('')).toBe('(body)');
  });
});
