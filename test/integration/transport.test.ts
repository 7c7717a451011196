import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type SecureVersion } from 'node:tls';
import { createServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../client/api/server';
import { apiHttpsOptions } from '../../lib/api-transport';
import { DEFAULT_BASE_DELAY_MS } from '../../client/api/auth/failure-throttle';
import { addressQueryHeaders, ADDRESS_SIGNATURE_HEADER, signAddressQuery } from '../../lib/address-webhook-signature';
import { EncryptionCodec } from '../../lib/temporal/codec';
import {
  eventually,
  groupSeed,
  quietLogger,
  startOrchestrator,
  startSandbox,
  stopChild,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json?: Json;
}

/**
 * One HTTP request from a chosen loopback source address (127.0.0.0/8 all reaches this machine), so that tests can be
 * several clients to the API's per-IP limits without blocking each other.
 */
function call(
  base: string,
  method: string,
  path: string,
  opts: { from?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: opts.from ?? '127.0.0.1',
        headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: Json | undefined;
          try {
            json = JSON.parse(text) as Json;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, json });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const WEBHOOK_MAX = 5;
const AUTH_FAILURE_MAX = 3;

describe('transport: security headers, rate limits, HTTPS', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      webhooks: { address: { [g.subA]: 'a'.repeat(32) } },
      rateLimits: {
        webhooks: { max: WEBHOOK_MAX, windowMs: 60_000 },
        authFailures: { max: AUTH_FAILURE_MAX, windowMs: 60_000 },
      },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('sends the security headers on every kind of answer: data, static files, docs, errors, the agent listener', async () => {
    const samples: [string, string, Record<string, string>, number][] = [
      ['GET', '/healthz', {}, 200],
      ['GET', '/v1/me', orch.headers('viewer'), 200],
      ['GET', '/v1/transfers', {}, 401],
      ['GET', '/v1/api-keys', orch.headers('viewer'), 403],
      ['GET', '/no/such/route', {}, 404],
      ['GET', '/console', {}, 200],
      ['GET', '/console/app.js', {}, 200],
      ['GET', '/openapi.json', {}, 200],
      ['GET', '/docs', {}, 200],
      ['GET', '/docs/json', {}, 200],
      ['POST', '/webhooks/notification', {}, 500], // no signing secret configured: a 5xx the network retries
    ];
    for (const [method, path, headers, status] of samples) {
      const r = await call(orch.apiUrl, method, path, { headers, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect([path, r.status]).toEqual([path, status]);
      expect([path, r.headers['x-content-type-options']]).toEqual([path, 'nosniff']);
      expect([path, r.headers['strict-transport-security']]).toEqual([path, expect.stringMatching(/max-age=\d+/)]);
      expect([path, r.headers['x-frame-options']]).toEqual([path, 'DENY']);
      expect([path, r.headers['referrer-policy']]).toEqual([path, 'no-referrer']);
      expect([path, r.headers['content-security-policy']]).toEqual([
        path,
        expect.stringMatching(/default-src 'self'.*frame-ancestors 'none'/),
      ]);
      expect(r.headers['x-powered-by']).toBeUndefined();
    }
    // The console's page allows its own files and its import map (by hash), no other inline script, no eval.
    const csp = String((await call(orch.apiUrl, 'GET', '/console')).headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    expect(csp).not.toMatch(/unsafe-eval|upgrade-insecure-requests/);
    // Everything else gets helmet's policy, without inline scripts either.
    expect(String((await call(orch.apiUrl, 'GET', '/healthz')).headers['content-security-policy'])).toMatch(
      /script-src 'self';\s*script-src-attr 'none'/,
    );
    const agent = await call(orch.agentUrl, 'GET', '/tx/info?id=x');
    expect(agent.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a valid credential is served at once from an address whose other credentials keep being refused; the refusals are slowed down', async () => {
    // One address for everyone behind it: a company's NAT, or callers a trusted proxy forwards.
    const shared = '127.0.0.3';
    const guess = (i: number) =>
      call(orch.apiUrl, 'GET', '/v1/me', {
        from: shared,
        headers: { authorization: `Bearer tro_0000000000000000_guess${i}` },
      });
    for (let i = 0; i < AUTH_FAILURE_MAX; i++) expect((await guess(i)).status).toBe(401);
    let started = Date.now();
    const limited = await guess(AUTH_FAILURE_MAX);
    const held = Date.now() - started;
    expect(limited.status).toBe(429);

    // Colleagues' valid keys from the same address: verified and served at once, without the hold.
    for (const headers of [orch.headers('viewer'), orch.headers('compliance')]) {
      started = Date.now();
      const served = await call(orch.apiUrl, 'GET', '/v1/me', { from: shared, headers });
      expect([served.status, served.json?.kind]).toEqual([200, 'api-key']);
      expect(Date.now() - started).toBeLessThan(DEFAULT_BASE_DELAY_MS);
    }
    // A refused role is a 403 at once, not a refusal of the credential.
    expect(
      (await call(orch.apiUrl, 'GET', '/v1/api-keys', { from: shared, headers: orch.headers('viewer') })).status,
    ).toBe(403);

    // Past the limit a refusal is held, then answered 429 with the seconds until the window ends.
    expect(held).toBeGreaterThanOrEqual(DEFAULT_BASE_DELAY_MS - 20);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.json).toEqual({
      error: {
        type: 'TooManyRequestsError',
        message: expect.stringMatching(/too many others from this address/),
        retryAfterSeconds: retryAfter,
      },
    });
    // Each further refusal is held longer (twice the first).
    started = Date.now();
    expect((await guess(AUTH_FAILURE_MAX + 1)).status).toBe(429);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * DEFAULT_BASE_DELAY_MS - 20);
    // Another address is not slowed, nor is a call that presents no credential at all (it guesses nothing).
    expect(
      (
        await call(orch.apiUrl, 'GET', '/v1/me', {
          from: '127.0.0.2',
          headers: { authorization: 'Bearer tro_0000000000000000_guess' },
        })
      ).status,
    ).toBe(401);
    for (let i = 0; i < AUTH_FAILURE_MAX + 2; i++)
      expect((await call(orch.apiUrl, 'GET', '/v1/me', { from: '127.0.0.4' })).status).toBe(401);
  });

  it('limits a flood of webhook posts per address with 429 and Retry-After, before verifying anything', async () => {
    const flood = '127.0.0.5';
    const post = (from: string) =>
      call(orch.apiUrl, 'POST', `/webhooks/notification`, {
        from,
        body: '{"message":"x"}',
        headers: { 'webhook-id': 'msg_x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' },
      });
    for (let i = 0; i < WEBHOOK_MAX; i++) expect((await post(flood)).status).not.toBe(429);
    const limited = await post(flood);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json!.error).toMatchObject({
      type: 'TooManyRequestsError',
      retryAfterSeconds: Number(limited.headers['retry-after']),
    });
    expect((await post('127.0.0.6')).status).not.toBe(429);

    // The address webhook is limited the same way, on its own count.
    const query = (from: string) =>
      call(orch.apiUrl, 'GET', `/webhooks/address/${encodeURIComponent(g.subA)}?asset=ETH&address=0xabc`, { from });
    for (let i = 0; i < WEBHOOK_MAX; i++) expect((await query(flood)).status).toBe(401);
    expect((await query(flood)).status).toBe(429);
  });

  it('the address webhook refuses a replayed query: timestamped signatures only, fresh ones (issue 15, item 14)', async () => {
    const secret = 'a'.repeat(32);
    const path = `/webhooks/address/${encodeURIComponent(g.subA)}?asset=ETH&address=0xabc`;
    let source = 30;
    // Each query from its own address, out of the webhook rate limit's way.
    const query = (headers: Record<string, string>) =>
      call(orch.apiUrl, 'GET', path, { from: `127.0.0.${source++}`, headers });
    const now = Math.floor(Date.now() / 1000);

    const fresh = addressQueryHeaders(secret, 'GET', path);
    expect(await query(fresh)).toMatchObject({ status: 200, json: { owns: false } });
    // Captured ten minutes ago: the signature is valid for its timestamp, which is out of the 5-minute window.
    const captured = addressQueryHeaders(secret, 'GET', path, now - 600);
    const replay = await query(captured);
    expect(replay.status).toBe(401);
    expect(replay.json!.error.message).toMatch(/timestamp outside the allowed window/);
    // Moving the timestamp forward breaks the signature.
    expect((await query({ ...captured, 'x-tro-timestamp': String(now) })).json!.error.message).toMatch(
      /timestamped signature does not verify/,
    );
    // Stripped to the network's own format (no timestamp): refused while timestamps are required, the default.
    const networkOnly = { [ADDRESS_SIGNATURE_HEADER]: signAddressQuery(secret, 'GET', path) };
    expect((await query(networkOnly)).json!.error.message).toMatch(/no timestamped signature/);

    // ADDRESS_WEBHOOK_TIMESTAMP=optional, for a network that signs only its own way: that format passes; a stale
    // timestamp still does not.
    orch.webhooks.addressTimestamp = 'optional';
    try {
      expect((await query(networkOnly)).status).toBe(200);
      expect((await query(captured)).status).toBe(401);
      expect((await query({ [ADDRESS_SIGNATURE_HEADER]: signAddressQuery('b'.repeat(32), 'GET', path) })).status).toBe(
        401,
      );
    } finally {
      delete orch.webhooks.addressTimestamp;
    }
  });

  describe('HTTPS', () => {
    let api: FastifyInstance;
    let port: number;
    let cert: Buffer;

    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'api-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost,IP:127.0.0.1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      cert = readFileSync(join(dir, 'cert.pem'));
      const transport = {
        tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') },
        rateLimits: { webhooks: { max: 100, windowMs: 60_000 }, authFailures: { max: 100, windowMs: 60_000 } },
      };
      api = await buildApi({
        temporal: orch.client,
        pool: orch.pool,
        codec: new EncryptionCodec(testEnv().keyring),
        taskQueue: orch.taskQueue,
        logger: quietLogger(),
        corsOrigins: [],
        group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
        incoming: orch.incoming,
        webhooks: orch.webhooks,
        https: apiHttpsOptions('0.0.0.0', transport),
        rateLimits: transport.rateLimits,
      });
      await api.listen({ host: '127.0.0.1', port: 0 });
      port = (api.server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await api?.close();
    });

    const handshake = (version: SecureVersion) =>
      new Promise<string>((resolve, reject) => {
        // SECLEVEL=0 lets this client offer TLS 1.1 at all (OpenSSL 3 refuses it by default), so the refusal seen is the server's.
        const socket = tlsConnect(
          {
            host: '127.0.0.1',
            port,
            ca: cert,
            servername: 'localhost',
            minVersion: version === 'TLSv1.1' ? 'TLSv1' : version,
            maxVersion: version,
            ciphers: 'DEFAULT@SECLEVEL=0',
          },
          () => {
            const protocol = socket.getProtocol() ?? '';
            socket.end();
            resolve(protocol);
          },
        );
        socket.on('error', reject);
      });

    it('refuses TLS 1.1 and speaks TLS 1.2 and 1.3', async () => {
      await expect(handshake('TLSv1.1')).rejects.toMatchObject({ code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' });
      expect(await handshake('TLSv1.2')).toBe('TLSv1.2');
      expect(await handshake('TLSv1.3')).toBe('TLSv1.3');
    });

    it('serves the API over it, headers included, and answers nothing in clear on its port', async () => {
      const answer = await new Promise<{ status: number; hsts?: string; body: string }>((resolve, reject) => {
        httpsRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/me',
            ca: cert,
            servername: 'localhost',
            headers: orch.headers('viewer'),
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode!, hsts: res.headers['strict-transport-security'], body }),
            );
          },
        )
          .on('error', reject)
          .end();
      });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: 'api-key', roles: ['viewer'] });
      expect(answer.hsts).toMatch(/max-age=/);
      await expect(call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).rejects.toThrow();
    });
  });
  /**
   * The API process as deployed behind an ingress that terminates TLS: client/main.ts on 0.0.0.0 over plain HTTP with
   * TLS_TERMINATED_BY_PROXY=1 and TRUST_PROXY=127.0.0.1, so this test's calls from 127.0.0.1 are the proxy's, and calls
   * from any other loopback address are a caller that went around it.
   */
  describe('TLS terminated by a proxy (TLS_TERMINATED_BY_PROXY)', () => {
    let child: ChildProcess;
    let base: string;
    let output = '';

    beforeAll(async () => {
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const { port: p } = s.address() as AddressInfo;
          s.close(() => resolve(p));
        });
      });
      base = `http://127.0.0.1:${port}`;
      child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'main.ts')], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          // /metrics on free ports: other processes of the run (and of this machine) hold the defaults.
          METRICS_PORT: '0',
          WORKER_METRICS_PORT: '0',
          TEMPORAL_SDK_METRICS_PORT: 'off',
          HOST: '0.0.0.0',
          PORT: String(port),
          TLS_TERMINATED_BY_PROXY: '1',
          TRUST_PROXY: '127.0.0.1',
          DATABASE_URL: testEnv().databaseUrl,
          TEMPORAL_ADDRESS: testEnv().temporalAddress,
          TEMPORAL_TASK_QUEUE: `tls-proxy-${randomUUID()}`,
          TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS,
          DATA_DIR: mkdtempSync(join(tmpdir(), 'tls-proxy-')),
          LOG_LEVEL: 'warn',
          KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
          AUDIT_CHECKPOINT_KEYS: `t:${randomBytes(32).toString('base64')}`,
          KEY_ROTATION_PERIOD: 'off',
          ADDRESS_BOOK_CRON: 'off',
          RETENTION_CRON: 'off',
          INCOMING_SWEEP_INTERVAL: 'off',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      // The probe needs no header: orchestrators call the pod directly.
      await eventually(
        async () =>
          (await fetch(`${base}/healthz`).then(
            (r) => r.ok,
            () => false,
          )) || undefined,
        90_000,
        250,
      ).catch((e: unknown) => {
        throw new Error(`the API behind a proxy did not answer: ${(e as Error).message}\n${output}`);
      });
    }, 120_000);
    afterAll(async () => {
      await stopChild(child);
    });

    it('starts on 0.0.0.0 over plain HTTP and says once that TLS is expected at the proxy', () => {
      const warnings = output.split('\n').filter((l) => l.includes('TLS_TERMINATED_BY_PROXY'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({
        level: 40,
        msg: expect.stringMatching(/plain HTTP .*TLS is expected at the proxy in TRUST_PROXY/),
      });
    });

    it('answers what the trusted proxy forwards as https, refuses http, no header and an untrusted sender; /healthz always', async () => {
      const viewer = orch.headers('viewer');
      const ok = await call(base, 'GET', '/v1/me', { headers: { ...viewer, 'x-forwarded-proto': 'https' } });
      expect([ok.status, ok.json]).toEqual([200, expect.objectContaining({ kind: 'api-key', roles: ['viewer'] })]);
      expect(ok.headers['strict-transport-security']).toMatch(/max-age=\d+/);

      const refusals: [string, { from?: string; headers: Record<string, string> }][] = [
        ['http at the proxy', { headers: { ...viewer, 'x-forwarded-proto': 'http' } }],
        ['no header', { headers: viewer }],
        [
          'https claimed by a caller that is not the proxy',
          { from: '127.0.0.9', headers: { ...viewer, 'x-forwarded-proto': 'https' } },
        ],
        ['no credential either', { headers: {} }],
      ];
      for (const [label, opts] of refusals) {
        const r = await call(base, 'GET', '/v1/me', opts);
        expect([label, r.status, r.json]).toEqual([
          label,
          400,
          {
            error: {
              type: 'ValidationError',
              message: expect.stringMatching(/^X-Forwarded-Proto: must be https/),
              field: 'X-Forwarded-Proto',
              rule: expect.any(String),
            },
          },
        ]);
        // Refusals keep the security headers.
        expect([label, r.headers['strict-transport-security'], r.headers['x-content-type-options']]).toEqual([
          label,
          expect.stringMatching(/max-age=/),
          'nosniff',
        ]);
      }
      // The agent-compatible routes on the API refuse in the network's error shape, as they answer every error.
      expect(await call(base, 'GET', '/tx/info?id=x', { headers: viewer })).toMatchObject({
        status: 400,
        json: { err: { name: 'NotabeneTransactionValidationError', code: 400, field: 'X-Forwarded-Proto' } },
      });

      for (const headers of [{}, { 'x-forwarded-proto': 'http' }] as Record<string, string>[]) {
        const health = await call(base, 'GET', '/healthz', { from: '127.0.0.9', headers });
        expect([health.status, health.json]).toEqual([200, expect.objectContaining({ ok: true })]);
      }
    });
  });
});
