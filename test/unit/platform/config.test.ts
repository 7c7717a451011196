import { loadClusterConfig, loadConfig } from '../../../config';
import { ConfigError } from '../../../lib/errors';
import { assertRetentionOutlastsTransfers } from '../../../retention/config';
import { toFieldPath } from '../../../lib/validation';

describe('loadConfig', () => {
  it('has working defaults with nothing set: loopback, 3000/4000, the embedded sandbox', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', apiPort: 3000, sandboxPort: 4000, network: undefined });
    expect(c.temporal).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'travel-rule',
      uiPort: 8233,
    });
    expect(c.publicApiUrl).toBe('http://127.0.0.1:3000');
  });

  it("takes http for the network on loopback only; reads the API's TLS files, rate limits and proxies", () => {
    const local = loadConfig({
      CLIENT_ID: 'a',
      CLIENT_SECRET: 'b',
      AUTH_URL: 'http://127.0.0.1:4000',
      BASE_URL: 'http://localhost:4000',
    });
    expect(local.network).toMatchObject({
      authUrl: 'http://127.0.0.1:4000',
      baseUrl: 'http://localhost:4000',
      baseUrlPii: 'http://localhost:4000/pii',
    });
    expect(loadConfig({}).transport).toEqual({
      rateLimits: {
        webhooks: { max: 6000, windowMs: 60_000 },
        authFailures: { max: 20, windowMs: 300_000 },
        healthz: { max: 300, windowMs: 60_000 },
      },
    });
    const c = loadConfig({
      HOST: '0.0.0.0',
      TLS_CERT_FILE: '/etc/tls/api.pem',
      TLS_KEY_FILE: '/etc/tls/api.key',
      WEBHOOK_RATE_LIMIT: '100/10s',
      AUTH_FAILURE_RATE_LIMIT: '5/1h',
      HEALTHZ_RATE_LIMIT: '30/1m',
      TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1',
    });
    expect(c.transport).toEqual({
      tls: { certFile: '/etc/tls/api.pem', keyFile: '/etc/tls/api.key' },
      trustProxy: ['10.0.0.5', '10.1.0.0/16', '::1'],
      rateLimits: {
        webhooks: { max: 100, windowMs: 10_000 },
        authFailures: { max: 5, windowMs: 3_600_000 },
        healthz: { max: 30, windowMs: 60_000 },
      },
    });
    expect(() => loadConfig({ HEALTHZ_RATE_LIMIT: 'lots' })).toThrow(/^HEALTHZ_RATE_LIMIT: "lots" is not a rate limit/);
    expect(c.publicApiUrl).toBe('https://127.0.0.1:3000');
  });

  it('reads the agent variables, deriving the audiences the way the agent does', () => {
    const c = loadConfig({
      CLIENT_ID: 'id',
      CLIENT_SECRET: 's',
      AUTH_URL: 'https://auth.notabene.id',
      BASE_URL: 'https://api.notabene.dev/',
      BASEURL_PII: 'https://pii.notabene.dev',
    });
    expect(c.network).toEqual({
      authUrl: 'https://auth.notabene.id',
      audience: 'https://api.notabene.dev',
      baseUrl: 'https://api.notabene.dev',
      audiencePii: 'https://pii.notabene.dev',
      baseUrlPii: 'https://pii.notabene.dev',
      clientId: 'id',
      clientSecret: 's',
    });
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: "abc" is not a TCP port/],
    [{ PORT: '70000' }, /^PORT:/],
    [
      { BASE_URL: 'ftp://x', CLIENT_ID: 'a', CLIENT_SECRET: 'b', AUTH_URL: 'https://a' },
      /^BASE_URL: "ftp:\/\/x" is not an http\(s\) URL/,
    ],
    [{ CLIENT_ID: 'a' }, /^CLIENT_SECRET: is unset while CLIENT_ID is set/],
    [
      { CLIENT_ID: 'a', CLIENT_SECRET: 'b', AUTH_URL: 'https://auth.notabene.id', BASE_URL: 'http://api.notabene.dev' },
      /^BASE_URL: "http:\/\/api\.notabene\.dev" is plain http to a host that is not on loopback/,
    ],
    [
      { CLIENT_ID: 'a', CLIENT_SECRET: 'b', AUTH_URL: 'http://10.0.0.8:4000', BASE_URL: 'https://api.notabene.dev' },
      /^AUTH_URL: .* is plain http to a host that is not on loopback/,
    ],
    [
      {
        CLIENT_ID: 'a',
        CLIENT_SECRET: 'b',
        AUTH_URL: 'https://a.example',
        BASE_URL: 'https://b.example',
        BASEURL_PII: 'http://pii.example',
      },
      /^BASEURL_PII: .* is plain http/,
    ],
    [{ TLS_CERT_FILE: '/etc/tls/api.pem' }, /^TLS_KEY_FILE: is unset while TLS_CERT_FILE is set/],
    [{ TLS_KEY_FILE: '/etc/tls/api.key' }, /^TLS_CERT_FILE: is unset while TLS_KEY_FILE is set/],
    [{ WEBHOOK_RATE_LIMIT: '100' }, /^WEBHOOK_RATE_LIMIT: "100" is not a rate limit/],
    [{ AUTH_FAILURE_RATE_LIMIT: '0/1m' }, /^AUTH_FAILURE_RATE_LIMIT: "0\/1m" is not a rate limit/],
    [{ ADDRESS_WEBHOOK_TIMESTAMP: 'maybe' }, /^ADDRESS_WEBHOOK_TIMESTAMP: "maybe" is neither required nor optional/],
    [{ TRUST_PROXY: '10.0.0.0/99' }, /^TRUST_PROXY: "10\.0\.0\.0\/99" is not an IP address or CIDR/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: is not a postgres:\/\/ URL/],
    [{ GATEWAY_VASP_DID: 'gateway' }, /^GATEWAY_VASP_DID: "gateway" is not a DID/],
    [
      { GATEWAY_VASP_DID: 'did:ethr:0x1', SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2,did:ethr:0x1' },
      /contains the gateway DID/,
    ],
    // Settings keyed by VASP name only the group's own: a mistyped DID is refused, not silently ignored.
    [
      {
        GATEWAY_VASP_DID: 'did:ethr:0x1',
        SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2',
        TRANSFER_BROADCAST_BY_SUBSIDIARY: '{"did:ethr:0x3": "at-once"}',
      },
      /^TRANSFER_BROADCAST_BY_SUBSIDIARY: "did:ethr:0x3" is not one of the group's VASPs/,
    ],
    [
      // The gateway sends nothing: its own broadcast rule would be a mistake too.
      {
        GATEWAY_VASP_DID: 'did:ethr:0x1',
        SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2',
        TRANSFER_BROADCAST_BY_SUBSIDIARY: '{"did:ethr:0x1": "at-once"}',
      },
      /^TRANSFER_BROADCAST_BY_SUBSIDIARY: "did:ethr:0x1" is not one of the group's VASPs/,
    ],
    [
      { SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2', SUBSIDIARY_JURISDICTIONS: '{"did:ethr:0x9": "DE"}' },
      /^SUBSIDIARY_JURISDICTIONS: "did:ethr:0x9" is not one of the group's VASPs/,
    ],
  ])('rejects %j with one ConfigError line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: data retention', () => {
  it('defaults to a nightly sweep at 03:30 UTC, webhook ids for 30 days, transfer personal data for 1825', () => {
    expect(loadConfig({}).retention).toEqual({
      cron: '30 3 * * *',
      timezone: 'UTC',
      webhookDays: 30,
      transferPiiDays: 1825,
    });
  });

  it('reads the four settings; off removes the schedule', () => {
    expect(
      loadConfig({
        RETENTION_CRON: ' 0 4 * * 1-5 ',
        RETENTION_TIMEZONE: 'Europe/Zurich',
        RETENTION_WEBHOOK_DAYS: '7',
        RETENTION_TRANSFER_PII_DAYS: '1',
      }).retention,
    ).toEqual({ cron: '0 4 * * 1-5', timezone: 'Europe/Zurich', webhookDays: 7, transferPiiDays: 1 });
    expect(loadConfig({ RETENTION_CRON: 'off' }).retention.cron).toBeUndefined();
    expect(loadConfig({ RETENTION_WEBHOOK_DAYS: '', RETENTION_TRANSFER_PII_DAYS: '' }).retention).toMatchObject({
      webhookDays: 30,
      transferPiiDays: 1825,
    });
  });

  it.each([
    [{ RETENTION_CRON: '30 3 * *' }, /^RETENTION_CRON: "30 3 \* \*" is not a five-field cron expression/],
    [{ RETENTION_CRON: 'nightly' }, /^RETENTION_CRON:/],
    [{ RETENTION_TIMEZONE: 'Mars/Olympus' }, /^RETENTION_TIMEZONE: "Mars\/Olympus" is not an IANA time zone/],
    [{ RETENTION_WEBHOOK_DAYS: '0' }, /^RETENTION_WEBHOOK_DAYS: "0" is not a whole number of days from 1/],
    [{ RETENTION_WEBHOOK_DAYS: '1.5' }, /^RETENTION_WEBHOOK_DAYS:/],
    [{ RETENTION_WEBHOOK_DAYS: '30d' }, /^RETENTION_WEBHOOK_DAYS:/],
    [{ RETENTION_TRANSFER_PII_DAYS: '-1' }, /^RETENTION_TRANSFER_PII_DAYS: "-1" is not a whole number of days/],
    [{ RETENTION_TRANSFER_PII_DAYS: 'five years' }, /^RETENTION_TRANSFER_PII_DAYS:/],
    [{ RETENTION_TRANSFER_PII_DAYS: '99999999' }, /^RETENTION_TRANSFER_PII_DAYS:/],
  ])('rejects %j with one ConfigError naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: one configuration, with every section', () => {
  it('has the transfers, incoming and webhooks sections with their defaults', () => {
    const c = loadConfig({});
    expect(c.transfers).toEqual({
      answerDeadlineMs: 86_400_000,
      pollIntervalMs: 300_000,
      noKeyMode: 'originator-only',
      callbackUrl: undefined,
      directoryCacheMs: 60_000,
      broadcast: { rule: { when: 'on-accepted' }, bySubsidiary: {} },
      custodyCallbacks: false,
    });
    expect(c.custody).toEqual({});
    // One CUSTODY_CALLBACK_URL serves the deposits' and the transfers' callbacks.
    const withCustody = loadConfig({
      CUSTODY_CALLBACK_URL: 'https://custody.internal/callbacks',
      CUSTODY_CALLBACK_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    });
    expect(withCustody.custody.callbackUrl).toBe('https://custody.internal/callbacks');
    expect(withCustody.transfers.custodyCallbacks).toBe(true);
    // The group's own VASPs are accepted.
    const keyed = loadConfig({
      GATEWAY_VASP_DID: 'did:ethr:0x1',
      SUBSIDIARY_VASP_DIDS: 'did:ethr:0x2',
      TRANSFER_BROADCAST_BY_SUBSIDIARY: '{"did:ethr:0x2": "at-once"}',
      SUBSIDIARY_JURISDICTIONS: '{"did:ethr:0x1": "CH", "did:ethr:0x2": "DE"}',
    });
    expect(keyed.transfers.broadcast.bySubsidiary).toEqual({ 'did:ethr:0x2': { when: 'at-once' } });
    expect(keyed.jurisdictions.subsidiaryCountries).toEqual({ 'did:ethr:0x1': 'CH', 'did:ethr:0x2': 'DE' });
    expect(c.incoming).toEqual({
      routeDeadline: '1h',
      routeGiveUpAfter: '24h',
      reviewDeadline: '4h',
      pollInterval: '5m',
      screeningThreshold: 0.85,
      sweepInterval: '10m',
      sweepMinAge: '2m',
    });
    expect(c.webhooks).toEqual({ notification: {}, address: {}, addressTimestamp: 'required' });
  });

  it('reads every duration with one syntax (ms, s, m, h, d), each with its own floor', () => {
    const c = loadConfig({
      TRANSFER_ANSWER_DEADLINE: '90m',
      TRANSFER_DIRECTORY_CACHE: '0',
      INCOMING_POLL_INTERVAL: '1500ms',
      INCOMING_SWEEP_INTERVAL: 'off',
      INCOMING_SWEEP_MIN_AGE: '0s',
      KEY_ROTATION_PERIOD: '2d',
    });
    expect(c.transfers).toMatchObject({ answerDeadlineMs: 5_400_000, directoryCacheMs: 0 });
    expect(c.incoming).toMatchObject({ pollInterval: '1500ms', sweepInterval: null, sweepMinAge: '0s' });
    expect(c.keyRotationPeriodMs).toBe(2 * 86_400_000);
  });

  it.each([
    [{ TRANSFER_POLL_INTERVAL: '50ms' }, /^TRANSFER_POLL_INTERVAL: "50ms" is not a duration of at least 100 ms/],
    [{ INCOMING_ROUTE_DEADLINE: '0h' }, /^INCOMING_ROUTE_DEADLINE: "0h" is not a duration above zero/],
    [{ INCOMING_REVIEW_DEADLINE: '4 hours' }, /^INCOMING_REVIEW_DEADLINE:/],
    [{ KEY_ROTATION_PERIOD: '30s' }, /^KEY_ROTATION_PERIOD: "30s" is not a duration of at least 60000 ms/],
    [{ ADDRESS_BOOK_CRON: '* * *' }, /^ADDRESS_BOOK_CRON: "\* \* \*" is not a five-field cron expression/],
    [{ ADDRESS_BOOK_TIMEZONE: 'Mars/Olympus' }, /^ADDRESS_BOOK_TIMEZONE:/],
    [
      { ADDRESS_WEBHOOK_SECRETS: '{"did:ethr:0x1":"short"}' },
      /^ADDRESS_WEBHOOK_SECRETS: the secret of "did:ethr:0x1" is not a signing secret of at least 16 bytes/,
    ],
    [{ SCREENING_NAME_THRESHOLD: '2' }, /^SCREENING_NAME_THRESHOLD:/],
  ])('rejects %j with one ConfigError naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('assertRetentionOutlastsTransfers', () => {
  it('refuses a retention shorter than the answer deadline plus a day, naming the setting', () => {
    const day = 86_400_000;
    expect(() => assertRetentionOutlastsTransfers({ transferPiiDays: 1 }, day)).toThrow(
      /^RETENTION_TRANSFER_PII_DAYS: 1 days would erase/,
    );
    expect(() => assertRetentionOutlastsTransfers({ transferPiiDays: 2 }, day)).not.toThrow();
    expect(() => assertRetentionOutlastsTransfers({ transferPiiDays: 3 }, 2.5 * day)).toThrow(ConfigError);
    expect(() => assertRetentionOutlastsTransfers({ transferPiiDays: 1825 }, day)).not.toThrow();
  });
});

describe('toFieldPath', () => {
  it('renders JSON pointers as the dotted paths error bodies use', () => {
    expect(toFieldPath('/originator/originatorPersons/0/naturalPerson')).toBe(
      'originator.originatorPersons[0].naturalPerson',
    );
    expect(toFieldPath('/0/address', 'addresses')).toBe('addresses[0].address');
    expect(toFieldPath('')).toBe('(body)');
  });
});

describe('loadClusterConfig (npm run start:cluster)', () => {
  it('derives every service port from the frontend port, each overridable, with metrics off by default', () => {
    const c = loadClusterConfig({ TEMPORAL_ADDRESS: '127.0.0.1:7633', TEMPORAL_MATCHING_PORT: '7690' });
    expect(c.ports).toEqual({
      frontend: 7633,
      frontendHttp: 7643,
      frontendMembership: 7653,
      history: 7634,
      historyMembership: 7654,
      matching: 7690,
      matchingMembership: 7655,
      worker: 7636,
      workerMembership: 7656,
    });
    expect(c).toMatchObject({
      frontendHost: '127.0.0.1',
      metricsPort: undefined,
      database: 'travel_rule_temporal',
      workerProcesses: 2,
    });
    expect(loadClusterConfig({ TEMPORAL_METRICS_PORT: '9090', WORKER_PROCESSES: '1' })).toMatchObject({
      metricsPort: 9090,
      workerProcesses: 1,
    });
  });

  it('names the variable of a bad value', () => {
    expect(() => loadClusterConfig({ TEMPORAL_HISTORY_PORT: '70000' })).toThrow(/TEMPORAL_HISTORY_PORT/);
    expect(() => loadClusterConfig({ TEMPORAL_ADDRESS: 'localhost' })).toThrow(/TEMPORAL_ADDRESS/);
    expect(() => loadClusterConfig({ TEMPORAL_CLUSTER_DATABASE: 'x"; drop' })).toThrow(/TEMPORAL_CLUSTER_DATABASE/);
    expect(() => loadClusterConfig({ WORKER_PROCESSES: '0' })).toThrow(/WORKER_PROCESSES/);
    expect(() => loadClusterConfig({ TEMPORAL_ADDRESS: '127.0.0.1:40000' })).toThrow(
      /TEMPORAL_FRONTEND_MEMBERSHIP_PORT/,
    );
  });
});

describe('loadConfig: operator authentication and the agent listener', () => {
  it('accepts API keys only by default; OIDC with issuer and audience, asymmetric algorithms and a small clock skew', () => {
    expect(loadConfig({}).auth).toEqual({});
    expect(
      loadConfig({
        OPERATOR_AUTH_ISSUER: 'https://login.bank.example/realms/ops',
        OPERATOR_AUTH_AUDIENCE: 'tro',
        OPERATOR_AUTH_ROLES_CLAIM: 'realm_access.roles',
        API_TOKEN: 'tro_x',
      }).auth,
    ).toEqual({
      apiToken: 'tro_x',
      oidc: {
        issuer: 'https://login.bank.example/realms/ops',
        audience: 'tro',
        rolesClaim: 'realm_access.roles',
        rolePrefix: '',
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        clockToleranceSeconds: 30,
        requireAtJwt: true,
      },
    });
    // Access tokens typed at+jwt (RFC 9068) unless the provider does not type them.
    expect(
      loadConfig({
        OPERATOR_AUTH_ISSUER: 'https://idp.example',
        OPERATOR_AUTH_AUDIENCE: 'a',
        OPERATOR_AUTH_REQUIRE_AT_JWT: '0',
      }).auth.oidc?.requireAtJwt,
    ).toBe(false);
    expect(() =>
      loadConfig({
        OPERATOR_AUTH_ISSUER: 'https://idp.example',
        OPERATOR_AUTH_AUDIENCE: 'a',
        OPERATOR_AUTH_REQUIRE_AT_JWT: 'maybe',
      }),
    ).toThrow(/^OPERATOR_AUTH_REQUIRE_AT_JWT: "maybe" is neither 1 nor 0/);
    expect(
      loadConfig({ OPERATOR_AUTH_ISSUER: 'http://127.0.0.1:4000/oidc', OPERATOR_AUTH_AUDIENCE: 'a' }).auth.oidc?.issuer,
    ).toBe('http://127.0.0.1:4000/oidc');
    // Compared with `iss` as it is: Auth0's issuers end with a slash.
    expect(
      loadConfig({ OPERATOR_AUTH_ISSUER: 'https://bank.eu.auth0.com/', OPERATOR_AUTH_AUDIENCE: 'a' }).auth.oidc?.issuer,
    ).toBe('https://bank.eu.auth0.com/');
    // The console signs in at the provider only when its client id is set.
    expect(
      loadConfig({ OPERATOR_AUTH_ISSUER: 'https://idp.example', OPERATOR_AUTH_AUDIENCE: 'a' }).auth.oidc
        ?.consoleClientId,
    ).toBeUndefined();
    expect(
      loadConfig({
        OPERATOR_AUTH_ISSUER: 'https://idp.example',
        OPERATOR_AUTH_AUDIENCE: 'a',
        OPERATOR_CONSOLE_CLIENT_ID: 'tro-console',
      }).auth.oidc?.consoleClientId,
    ).toBe('tro-console');
  });

  it.each([
    [
      { OPERATOR_AUTH_ISSUER: 'https://idp.example' },
      /^OPERATOR_AUTH_AUDIENCE: is unset while OPERATOR_AUTH_ISSUER is set/,
    ],
    [{ OPERATOR_AUTH_AUDIENCE: 'a' }, /^OPERATOR_AUTH_ISSUER: is unset/],
    [
      { OPERATOR_AUTH_ISSUER: 'http://idp.example', OPERATOR_AUTH_AUDIENCE: 'a' },
      /^OPERATOR_AUTH_ISSUER: "http:\/\/idp.example" is not an https URL/,
    ],
    [
      {
        OPERATOR_AUTH_ISSUER: 'https://idp.example',
        OPERATOR_AUTH_AUDIENCE: 'a',
        OPERATOR_AUTH_ALGORITHMS: 'RS256,HS256',
      },
      /^OPERATOR_AUTH_ALGORITHMS: "HS256" is not an accepted/,
    ],
    [
      { OPERATOR_AUTH_ISSUER: 'https://idp.example', OPERATOR_AUTH_AUDIENCE: 'a', OPERATOR_AUTH_ALGORITHMS: 'none' },
      /^OPERATOR_AUTH_ALGORITHMS: "none"/,
    ],
    [
      { OPERATOR_AUTH_ISSUER: 'https://idp.example', OPERATOR_AUTH_AUDIENCE: 'a', OPERATOR_AUTH_CLOCK_SKEW: '3600' },
      /^OPERATOR_AUTH_CLOCK_SKEW:/,
    ],
    [
      {
        OPERATOR_AUTH_ISSUER: 'https://idp.example',
        OPERATOR_AUTH_AUDIENCE: 'a',
        OPERATOR_CONSOLE_CLIENT_ID: 'tro console',
      },
      /^OPERATOR_CONSOLE_CLIENT_ID: is not a client id/,
    ],
    [
      { AGENT_PORT: '8080', AGENT_HOST: '0.0.0.0' },
      /^AGENT_HOST: "0.0.0.0" is not a loopback address.*AGENT_ALLOW_REMOTE=1/,
    ],
    [
      { AGENT_PORT: '8080', AGENT_HOST: '0.0.0.0', AGENT_ALLOW_REMOTE: '1' },
      /^AGENT_HOST: "0.0.0.0" is not a loopback address, and TLS_CERT_FILE and TLS_KEY_FILE are unset: .*Set TLS_CERT_FILE and TLS_KEY_FILE/,
    ],
    [
      {
        AGENT_PORT: '8080',
        AGENT_HOST: '10.0.0.5',
        AGENT_ALLOW_REMOTE: '1',
        TLS_TERMINATED_BY_PROXY: '1',
        TRUST_PROXY: '10.0.0.1',
      },
      /^AGENT_HOST: "10.0.0.5" is not a loopback address, and TLS_CERT_FILE/,
    ],
    [
      { AGENT_PUBLIC_HOST: 'https://agent.bank.example' },
      /^AGENT_PUBLIC_HOST: "https:\/\/agent.bank.example" is not a host name/,
    ],
    [{ AGENT_PUBLIC_HOST: 'agent.bank.example:99999' }, /^AGENT_PUBLIC_HOST: /],
    [{ AGENT_PORT: '3000' }, /^AGENT_PORT: is the API's port 3000/],
    [{ AGENT_PORT: 'x' }, /^AGENT_PORT: "x" is not a TCP port/],
  ])('rejects %j with one ConfigError line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('serves the agent endpoints on loopback only, unless AGENT_ALLOW_REMOTE=1 says otherwise, and then over TLS', () => {
    expect(loadConfig({}).agent).toEqual({ host: '127.0.0.1', allowRemote: false });
    expect(loadConfig({ AGENT_PORT: '8080' }).agent).toEqual({ port: 8080, host: '127.0.0.1', allowRemote: false });
    expect(loadConfig({ AGENT_PORT: '8080', AGENT_HOST: '::1' }).agent.host).toBe('::1');
    // On loopback it stays plain HTTP even when the API has TLS files: the programs written for the agent call http://.
    expect(
      loadConfig({ AGENT_PORT: '8080', TLS_CERT_FILE: '/etc/tls/api.pem', TLS_KEY_FILE: '/etc/tls/api.key' }).agent.tls,
    ).toBeUndefined();
    const tls = { TLS_CERT_FILE: '/etc/tls/api.pem', TLS_KEY_FILE: '/etc/tls/api.key' };
    expect(
      loadConfig({
        AGENT_PORT: '8080',
        AGENT_HOST: '10.0.0.5',
        AGENT_ALLOW_REMOTE: '1',
        AGENT_PUBLIC_HOST: 'agent.bank.example',
        ...tls,
      }).agent,
    ).toEqual({
      port: 8080,
      host: '10.0.0.5',
      allowRemote: true,
      tls: { certFile: '/etc/tls/api.pem', keyFile: '/etc/tls/api.key' },
      publicHost: 'agent.bank.example',
    });
  });
});
