import { groupSeed, randomSecret, startSandbox, type RunningSandbox } from '../harness/platform';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Issue 15, items 8 and 10: input the sandbox used to answer with 500 (or to stall on) is refused with 400 naming the field. */
describe('sandbox: unchecked input answers 400 naming the field', () => {
  const group = groupSeed();
  let sb: RunningSandbox;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  async function call(method: string, path: string, body?: unknown, opts: { auth?: boolean; raw?: string } = {}) {
    const headers: Record<string, string> = {};
    if (path.startsWith('/sandbox/')) Object.assign(headers, sb.testHeaders());
    else if (opts.auth !== false) headers.authorization = `Bearer ${await sb.token(group.gatewayUser)}`;
    if (body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers,
      body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    return { status: r.status, body: (await r.json()) as Json };
  }

  const dashes = '-'.repeat(36);

  it.each([
    ['POST', '/tx/redirect?id=abc&to=did:ethr:0x1', /^id: /],
    ['POST', `/tx/redirect?id=${dashes}&to=did:ethr:0x1`, /^id: /],
    ['GET', `/tx/info?id=${dashes}`, /^id: /],
    ['POST', `/tx/confirm?id=${dashes}`, /^id: /],
  ])('%s %s → 400', async (method, path, message) => {
    const r = await call(method, path);
    expect(r.status).toBe(400);
    expect(r.body.err.message).toMatch(message);
  });

  it('the directory listing refuses an order naming a property of every object, and a page beyond the row limit', async () => {
    for (const order of ['constructor', 'toString:ASC', '__proto__', 'hasOwnProperty']) {
      const r = await call('GET', `/tf/simple/vasps?order=${encodeURIComponent(order)}`, undefined, { auth: false });
      expect(r.status).toBe(400);
      expect(r.body.err.message).toMatch(/^order: /);
    }
    for (const page of ['1e20', '99999999999999999999']) {
      const r = await call('GET', `/tf/simple/vasps?page=${page}`, undefined, { auth: false });
      expect(r.status).toBe(400);
      expect(r.body.err.message).toMatch(/page/);
    }
    const ok = await call('GET', '/tf/simple/vasps?order=name:DESC:NULLS%20LAST,did&page=0', undefined, {
      auth: false,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.pagination.order).toBe('name:DESC:NULLS LAST,did:ASC');
  });

  it('the sandbox windows refuse an id of 36 dashes', async () => {
    const deliveries = await call('GET', `/sandbox/webhooks/deliveries?transactionId=${dashes}`);
    expect(deliveries.status).toBe(400);
    expect(deliveries.body.err.message).toMatch(/^transactionId: /);
    const received = await call('GET', `/sandbox/counterparties/${group.external}/received/${dashes}`);
    expect(received.status).toBe(400);
    expect(received.body.err.message).toMatch(/^txId: /);
  });

  it('a deeply nested pii answers 400 naming pii, on create and on update', async () => {
    const depth = 20_000;
    const nested = `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
    const body = (pii: string) =>
      `{"transactionAsset":"ETH","transactionAmount":"1","originatorVASPdid":"${group.subA}","beneficiaryVASPdid":"${group.external}",` +
      `"transactionBlockchainInfo":{"destination":"0x${randomSecret().slice(0, 8)}"},"pii":${pii}}`;
    const created = await call('POST', '/tx/create', undefined, { raw: body(nested) });
    expect(created.status).toBe(400);
    expect(created.body.err.message).toMatch(/^pii: /);
    const proof = await call('POST', '/tx/create', undefined, {
      raw: body('{"a":"x"}').replace(/}$/, `,"originatorProof":${nested}}`),
    });
    expect(proof.status).toBe(400);
    expect(proof.body.err.message).toMatch(/^originatorProof\.type: /);

    const tx = await call('POST', '/tx/create', undefined, { raw: body('{"a":"x"}') });
    expect(tx.status).toBe(200);
    const updated = await call('POST', '/tx/update', undefined, { raw: `{"id":"${tx.body.id}","pii":${nested}}` });
    expect(updated.status).toBe(400);
    expect(updated.body.err.message).toMatch(/^pii: /);
  });

  it("fastify's own refusals (schema, JSON, content type, unknown route) answer the network's error shape with its stack line", async () => {
    const token = await sb.token(group.gatewayUser);
    const send = async (method: string, path: string, init: { type?: string; body?: string } = {}) => {
      const r = await fetch(`${sb.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(init.type ? { 'content-type': init.type } : {}) },
        body: init.body,
      });
      return { status: r.status, body: (await r.json()) as Json };
    };
    const refusals = [
      await send('POST', `/tx/confirm?id=${dashes}&extra=${'x'.repeat(3)}`, { type: 'application/json', body: '[1]' }),
      await send('POST', '/tx/create', { type: 'application/json', body: '{"transactionAsset":' }),
      await send('POST', '/tx/create', { type: 'application/xml', body: '<tx/>' }),
      await send('GET', '/tx/nothing-here'),
    ];
    expect(refusals.map((r) => r.status)).toEqual([400, 400, 415, 404]);
    for (const { status, body } of refusals) {
      expect(body).toEqual({
        err: {
          name: expect.any(String),
          code: status,
          message: expect.any(String),
          stack: `${body.err.name}: ${body.err.message}`,
        },
      });
    }
  });

  it('answers an adversarial directory order (item 10) with 400 quickly, and a long one by its length', async () => {
    // Under the old pattern each added character doubled the time (31 ms at 22 characters).
    const adversarial = `${'a'.repeat(29)}!`;
    let started = Date.now();
    const r = await call('GET', `/tf/simple/vasps?order=${adversarial}`, undefined, { auth: false });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r.status).toBe(400);
    expect(r.body.err.message).toMatch(/^order: /);

    started = Date.now();
    const long = await call('GET', `/tf/simple/vasps?order=${'name,'.repeat(2000)}name`, undefined, { auth: false });
    expect(long.status).toBe(400);
    expect(long.body.err.message).toMatch(/^order: .*at most/);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
