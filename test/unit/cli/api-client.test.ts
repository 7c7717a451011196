import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, ApiError } from '../../../client/cli/api-client';

/** A local HTTP server answering each request with the next of `answers` (the last one repeats), recording what came. */
interface Answer {
  status: number;
  body?: string;
}

describe("the CLI's API client", () => {
  let server: Server;
  let url: string;
  let answers: Answer[] = [];
  const received: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string; at: number }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: Date.now(),
        });
        const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
        res.statusCode = answer.status;
        if (answer.body !== undefined) res.setHeader('content-type', 'application/json');
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    received.length = 0;
  });

  it('sends the credential and the JSON body, and returns the JSON answer', async () => {
    answers = [{ status: 200, body: '{"inserted":1}' }];
    await expect(api({ url, token: 'tro_secret' }, 'PUT', '/v1/addresses', { addresses: [] })).resolves.toEqual({
      inserted: 1,
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'PUT', url: '/v1/addresses', body: '{"addresses":[]}' });
    expect(received[0]!.headers).toMatchObject({
      authorization: 'Bearer tro_secret',
      'content-type': 'application/json',
    });
    await api({ url }, 'GET', '/v1/x');
    expect(received[1]!.headers.authorization).toBeUndefined();
  });

  it('turns an error answer into one line with method, path, status and the message, keeping the body', async () => {
    answers = [
      { status: 404, body: '{"error":{"message":"VASP did:x is not part of this system\'s group","field":"vaspDID"}}' },
    ];
    const e = (await api({ url }, 'POST', '/v1/vasps/did:x/keys/rotate', { reason: 'r' }).catch(
      (err: unknown) => err,
    )) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.message).toBe("POST /v1/vasps/did:x/keys/rotate: 404 VASP did:x is not part of this system's group");
    expect(e.status).toBe(404);
    expect(e.body.error?.field).toBe('vaspDID');
    answers = [{ status: 502 }];
    await expect(api({ url }, 'GET', '/v1/y')).rejects.toThrow(/^GET \/v1\/y: 502$/);
  });

  it('tries nothing again unless asked: one request per call, whatever the answer', async () => {
    answers = [{ status: 503, body: '{}' }];
    await expect(api({ url }, 'GET', '/v1/z')).rejects.toThrow(/: 503/);
    answers = [{ status: 429, body: '{}' }];
    await expect(api({ url }, 'PUT', '/v1/z', {})).rejects.toThrow(/: 429/);
    expect(received).toHaveLength(2);
  });

  it('with retries, tries a 5xx and a 429 again after a doubling delay, and gives up after the last retry', async () => {
    answers = [
      { status: 503, body: '{}' },
      { status: 429, body: '{}' },
      { status: 200, body: '{"ok":true}' },
    ];
    await expect(api({ url }, 'PUT', '/v1/addresses', { n: 1 }, { retries: 4 })).resolves.toEqual({ ok: true });
    expect(received.map((r) => r.body)).toEqual(['{"n":1}', '{"n":1}', '{"n":1}']);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(390);
    expect(received[2]!.at - received[1]!.at).toBeGreaterThanOrEqual(790);

    received.length = 0;
    answers = [{ status: 500, body: '{"error":{"message":"boom"}}' }];
    await expect(api({ url }, 'PUT', '/v1/addresses', {}, { retries: 2 })).rejects.toThrow(
      'PUT /v1/addresses: 500 boom',
    );
    expect(received).toHaveLength(3);
  });

  it('with retries, fails at once on another error answer', async () => {
    answers = [{ status: 409, body: '{"error":{"message":"addresses[3]: taken","index":3}}' }];
    const e = (await api({ url }, 'PUT', '/v1/addresses', {}, { retries: 4 }).catch((err: unknown) => err)) as ApiError;
    expect(e.body.error?.index).toBe(3);
    expect(received).toHaveLength(1);
  });

  it('with retries, tries again when the API cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const started = Date.now();
    await expect(api({ url: `http://127.0.0.1:${port}` }, 'PUT', '/v1/addresses', {}, { retries: 1 })).rejects.toThrow(
      'fetch failed',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });
});
