import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  eventually,
  groupSeed,
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
 * One request to 127.0.0.1:`port` with the headers given as they are (a `Host` of our choosing included, as a browser
 * sends a rebound page's name), over TLS when `ca` is given.
 */
function call(
  port: number,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string; ca?: Buffer; servername?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method,
      headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    };
    const onAnswer = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let json: Json | undefined;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString()) as Json;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, json });
      });
    };
    const req = opts.ca
      ? httpsRequest({ ...options, ca: opts.ca, servername: opts.servername ?? 'localhost' }, onAnswer)
      : httpRequest(options, onAnswer);
    req.on('error', reject);
    req.end(opts.body);
  });
}

const refusal = (
  field: 'Host' | 'Origin' | 'Sec-Fetch-Site',
  rule: string | jest.AsymmetricMatcher = expect.any(String),
) => ({
  err: { name: 'ForbiddenError', code: 403, message: expect.stringMatching(new RegExp(`^${field}: `)), field, rule },
});

/**
 * Issue 25, item 6: the agent listener answers without credentials, so a web page that rebinds its own name to
 * 127.0.0.1 must not be able to use it. It answers only a `Host` naming the listener (loopback's names, or
 * AGENT_PUBLIC_HOST) with its port, never a request with an `Origin`, and off loopback only over TLS.
 */
describe('agent listener: requests addressed to it by its own names, from programs', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let port: number;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    });
    port = Number(new URL(orch.agentUrl).port);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('answers a program on this machine by each loopback name, the port it listens on included', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LocalHost:${port}`]) {
      const r = await call(port, 'GET', '/didkey/new', { headers: { host } });
      expect([host, r.status, r.json?.did]).toEqual([host, 200, expect.stringMatching(/^did:key:z/)]);
    }
    // A POST body is read and checked as before: the route's own validation answers.
    const bad = await call(port, 'POST', '/tx/create', { body: '{}' });
    expect([bad.status, bad.json?.err?.name]).toEqual([400, 'NotabeneTransactionValidationError']);
  });

  it('refuses any other Host with 403 naming the header and the rule: a rebound name, another port, no port, look-alikes', async () => {
    const rule = `must be one of 127.0.0.1:${port}, localhost:${port}, [::1]:${port}: the agent endpoints answer without credentials, only to requests addressed to this listener by one of its own names`;
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      'localhost',
      `localhost.:${port}`,
      `127.0.0.2:${port}`,
      `evil.localhost:${port}`,
      `127.0.0.1:${port}@evil.example`,
      `[::1]:${port}:${port}`,
    ]) {
      const r = await call(port, 'GET', '/didkey/new', { headers: { host } });
      expect([host, r.status, r.json]).toEqual([host, 403, refusal('Host', rule)]);
      expect(r.json!.err.message).toBe(`Host: ${rule}`);
      // Refusals keep the security headers.
      expect([host, r.headers['x-content-type-options']]).toEqual([host, 'nosniff']);
    }
    // Whatever the route: an unknown one is refused the same, not answered 404.
    expect((await call(port, 'GET', '/no/such/route', { headers: { host: `evil.example:${port}` } })).status).toBe(403);
  });

  it('refuses any request with an Origin, its own included, before the body is parsed', async () => {
    for (const origin of ['http://evil.example', `http://127.0.0.1:${port}`, `http://localhost:${port}`, 'null']) {
      const r = await call(port, 'GET', '/didkey/new', { headers: { origin } });
      expect([origin, r.status, r.json]).toEqual([
        origin,
        403,
        refusal('Origin', expect.stringMatching(/^must not be sent: /)),
      ]);
    }
    // Malformed JSON from a page is refused for its Origin: the parser (a 400) never ran, nor the route.
    const post = await call(port, 'POST', '/tx/create', {
      headers: { origin: 'http://evil.example' },
      body: '{"not json',
    });
    expect([post.status, post.json?.err?.field]).toEqual([403, 'Origin']);
    expect((await call(port, 'POST', '/tx/create', { body: '{"not json' })).status).toBe(400);
  });

  it("refuses a browser's request without an Origin (an image or a link on a page): it carries Sec-Fetch-Site", async () => {
    for (const site of ['cross-site', 'same-site', 'same-origin', 'none']) {
      const r = await call(port, 'GET', '/tx/info?id=00000000-0000-4000-8000-000000000000', {
        headers: { 'sec-fetch-site': site },
      });
      expect([site, r.status, r.json?.err?.field]).toEqual([site, 403, 'Sec-Fetch-Site']);
    }
  });
});

/** A TCP port nothing listens on now, for a child process to take. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

/**
 * The API process as an operator would run it with the agent listener off loopback: client/main.ts with
 * AGENT_HOST=0.0.0.0, AGENT_ALLOW_REMOTE=1, the TLS files, and AGENT_PUBLIC_HOST naming the host callers use.
 */
describe('agent listener off loopback (AGENT_ALLOW_REMOTE=1)', () => {
  const publicName = 'agent.bank.example';
  let child: ChildProcess;
  let agentPort: number;
  let cert: Buffer;
  let output = '';

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-tls-'));
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
        `/CN=${publicName}`,
        '-addext',
        `subjectAltName=DNS:${publicName},DNS:localhost,IP:127.0.0.1`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    const apiPort = await freePort();
    agentPort = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'main.ts')], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // /metrics on free ports: other processes of the run (and of this machine) hold the defaults.
        METRICS_PORT: '0',
        WORKER_METRICS_PORT: '0',
        TEMPORAL_SDK_METRICS_PORT: 'off',
        PORT: String(apiPort),
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
        AGENT_PORT: String(agentPort),
        AGENT_HOST: '0.0.0.0',
        AGENT_ALLOW_REMOTE: '1',
        AGENT_PUBLIC_HOST: publicName,
        DATABASE_URL: testEnv().databaseUrl,
        TEMPORAL_ADDRESS: testEnv().temporalAddress,
        TEMPORAL_TASK_QUEUE: `agent-remote-${randomUUID()}`,
        TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'agent-remote-')),
        LOG_LEVEL: 'warn',
        KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
        KEY_ROTATION_PERIOD: 'off',
        ADDRESS_BOOK_CRON: 'off',
        RETENTION_CRON: 'off',
        INCOMING_SWEEP_INTERVAL: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await eventually(
      async () =>
        (await call(agentPort, 'GET', '/didkey/new', { ca: cert }).then(
          (r) => r.status === 200,
          () => false,
        )) || undefined,
      90_000,
      250,
    ).catch((e: unknown) => {
      throw new Error(`the agent listener did not answer over TLS: ${(e as Error).message}\n${output}`);
    });
  }, 120_000);
  afterAll(async () => {
    await stopChild(child);
  });

  it('serves HTTPS only, and says once at start that it answers without authentication', async () => {
    await expect(call(agentPort, 'GET', '/didkey/new')).rejects.toThrow();
    const warnings = output.split('\n').filter((l) => l.includes('AGENT_ALLOW_REMOTE'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/over HTTPS WITHOUT authentication/),
    });
  });

  it("answers the public name and loopback's with its port, and refuses other names and any Origin", async () => {
    for (const host of [`${publicName}:${agentPort}`, `AGENT.bank.example:${agentPort}`, `127.0.0.1:${agentPort}`]) {
      const r = await call(agentPort, 'GET', '/didkey/new', { ca: cert, servername: publicName, headers: { host } });
      expect([host, r.status, r.json?.did]).toEqual([host, 200, expect.stringMatching(/^did:key:z/)]);
    }
    for (const host of [
      `evil.example:${agentPort}`,
      publicName,
      `${publicName}:${agentPort + 1}`,
      `x.${publicName}:${agentPort}`,
    ]) {
      const r = await call(agentPort, 'GET', '/didkey/new', { ca: cert, servername: publicName, headers: { host } });
      expect([host, r.status, r.json]).toEqual([
        host,
        403,
        refusal('Host', expect.stringContaining(`, ${publicName}:${agentPort}: `)),
      ]);
    }
    const page = await call(agentPort, 'GET', '/didkey/new', {
      ca: cert,
      servername: publicName,
      headers: { host: `${publicName}:${agentPort}`, origin: `https://${publicName}:${agentPort}` },
    });
    expect([page.status, page.json]).toEqual([403, refusal('Origin')]);
  });
});
