import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { addressQueryHeaders } from '../../lib/address-webhook-signature';
import { generateWebhookSecret, webhookHeaders } from '../../lib/webhook-signature';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  json?: Json;
}

/** One HTTP request from a chosen loopback source address, so that each test is a client of its own to the per-IP limits. */
function call(
  base: string,
  method: string,
  path: string,
  opts: { from?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
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
          let json: Json | undefined;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString()) as Json;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, json });
        });
      },
    );
    // The server may answer (413) and close before it has read a long body: the answer is what counts.
    req.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e),
    );
    req.end(opts.body);
  });
}

const HEALTHZ_MAX = 4;
const KiB = 1024;

/** A Transaction update as the network delivers it, padded with an extra field to `size` bytes or so. */
function delivery(size = 0): string {
  const tx = {
    id: randomUUID(),
    status: 'SENT',
    transactionRef: randomUUID(),
    originatorVASPdid: 'did:ethr:0x01',
    beneficiaryVASPdid: 'did:ethr:0x02',
  };
  const body = { message: 'transaction.updated', payload: { transaction: tx } };
  if (size === 0) return JSON.stringify(body);
  const bare = JSON.stringify({ ...body, padding: '' }).length;
  return JSON.stringify({ ...body, padding: 'x'.repeat(Math.max(0, size - bare)) });
}

describe('webhook receivers verify before they parse, and cap the body; /healthz is rate-limited (issue 25, item 3)', () => {
  const g = groupSeed();
  const secret = generateWebhookSecret();
  const addressSecret = 'b'.repeat(32);
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  const notification = (from: string, headers: Record<string, string>, body: string | Buffer) =>
    call(orch.apiUrl, 'POST', '/webhooks/notification/gateway', { from, headers, body });

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      webhooks: { notification: { gateway: secret }, address: { [g.subA]: addressSecret } },
      rateLimits: {
        webhooks: { max: 1_000_000, windowMs: 60_000 },
        authFailures: { max: 1_000_000, windowMs: 60_000 },
        healthz: { max: HEALTHZ_MAX, windowMs: 60_000 },
      },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('answers 413 to a 300 KiB delivery, signed or not, and takes one of 200 KiB that verifies', async () => {
    const big = delivery(300 * KiB);
    const unsigned = await notification('127.0.0.2', {}, big);
    expect(unsigned.status).toBe(413);
    const signed = await notification('127.0.0.2', webhookHeaders(secret, `msg_${randomUUID()}`, big), big);
    expect(signed.status).toBe(413);

    const fits = delivery(200 * KiB);
    const ok = await notification('127.0.0.2', webhookHeaders(secret, `msg_${randomUUID()}`, fits), fits);
    expect(ok).toMatchObject({ status: 200, json: { received: true, duplicate: false, outcome: 'not-ours' } });
  });

  it('refuses a badly signed body of invalid JSON with 401, not the 400 a parse would give', async () => {
    const notJson = '{"message": "transaction.updated", "payload": {';
    const forged = {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    };
    const bad = await notification('127.0.0.3', forged, notJson);
    expect(bad.status).toBe(401);
    expect(bad.json?.error?.type).toBe('AuthenticationError');
    // Signed with another endpoint's secret: the same.
    const other = await notification(
      '127.0.0.3',
      webhookHeaders(generateWebhookSecret(), 'msg_other', notJson),
      notJson,
    );
    expect(other.status).toBe(401);
    // No signature at all.
    expect((await notification('127.0.0.3', {}, notJson)).status).toBe(401);
    // Only once it verifies is the body read: then the JSON error, naming the body.
    const signed = await notification('127.0.0.3', webhookHeaders(secret, `msg_${randomUUID()}`, notJson), notJson);
    expect(signed.status).toBe(400);
    expect(signed.json?.error).toMatchObject({ type: 'ValidationError', field: '(body)' });
  });

  it('verifies over the bytes sent: a signature over other bytes that decode to the same text does not verify', async () => {
    // Two different invalid UTF-8 sequences both decode to U+FFFD: a signature over the text would accept both.
    const signedBytes = Buffer.concat([Buffer.from('{"message":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const sentBytes = Buffer.concat([Buffer.from('{"message":"'), Buffer.from([0xfe]), Buffer.from('"}')]);
    expect(signedBytes.toString('utf8')).toBe(sentBytes.toString('utf8'));
    const headers = webhookHeaders(secret, `msg_${randomUUID()}`, signedBytes);
    expect((await notification('127.0.0.4', headers, sentBytes)).status).toBe(401);
  });

  it('still takes a valid signed delivery and acknowledges its repetition as a duplicate', async () => {
    const body = delivery();
    const headers = webhookHeaders(secret, `msg_${randomUUID()}`, body);
    expect(await notification('127.0.0.5', headers, body)).toMatchObject({
      status: 200,
      json: { received: true, duplicate: false, outcome: 'not-ours' },
    });
    expect(await notification('127.0.0.5', headers, body)).toMatchObject({
      status: 200,
      json: { received: true, duplicate: true },
    });
  });

  it('the address webhook checks the signature before the query: a bad query unsigned is 401, signed 400', async () => {
    const path = `/webhooks/address/${encodeURIComponent(g.subA)}?asset=${'x'.repeat(100)}`;
    const unsigned = await call(orch.apiUrl, 'GET', path, { from: '127.0.0.6' });
    expect(unsigned.status).toBe(401);
    const signed = await call(orch.apiUrl, 'GET', path, {
      from: '127.0.0.6',
      headers: addressQueryHeaders(addressSecret, 'GET', path),
    });
    expect(signed.status).toBe(400);
    const good = `/webhooks/address/${encodeURIComponent(g.subA)}?asset=ETH&address=0x${'ab'.repeat(20)}`;
    expect(
      await call(orch.apiUrl, 'GET', good, {
        from: '127.0.0.6',
        headers: addressQueryHeaders(addressSecret, 'GET', good),
      }),
    ).toMatchObject({ status: 200, json: { owns: false } });
  });

  it('answers /healthz past its limit per address with 429 and Retry-After; another address goes on', async () => {
    for (let i = 0; i < HEALTHZ_MAX; i++)
      expect((await call(orch.apiUrl, 'GET', '/healthz', { from: '127.0.0.7' })).status).toBe(200);
    const over = await call(orch.apiUrl, 'GET', '/healthz', { from: '127.0.0.7' });
    expect(over.status).toBe(429);
    expect(over.json?.error).toMatchObject({ type: 'TooManyRequestsError' });
    expect((await call(orch.apiUrl, 'GET', '/healthz', { from: '127.0.0.8' })).status).toBe(200);
  });
});
