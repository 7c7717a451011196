import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { encryptIvms101, unflattenIvms101 } from '../../lib/ivms101';
import { eventually, groupSeed, randomDid, randomSecret, startSandbox, type RunningSandbox } from '../harness/platform';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;

/** The sandboxes this file started: a `/sandbox/*` call carries the test token of the one it goes to. */
const running: RunningSandbox[] = [];
const send = async (method: string, url: string, body?: unknown, auth?: string) => {
  const bearer =
    auth ?? (url.includes('/sandbox/') ? running.find((s) => url.startsWith(`${s.url}/`))?.testToken : undefined);
  const r = await fetch(url, {
    method,
    headers: {
      ...(bearer && { authorization: `Bearer ${bearer}` }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: (text ? JSON.parse(text) : undefined) as Json };
};

async function tokenFor(
  sb: RunningSandbox,
  c: { clientId: string; clientSecret: string },
  audience = sb.url,
): Promise<string> {
  const r = await send('POST', `${sb.url}/oauth/token`, {
    client_id: c.clientId,
    client_secret: c.clientSecret,
    grant_type: 'client_credentials',
    audience,
  });
  return r.body.access_token as string;
}

/** A webhook receiver recording each delivery's webhook-id and arrival time. */
async function receiver() {
  const received: { id: string; at: number; txId: string }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      received.push({
        id: String(req.headers['webhook-id']),
        at: Date.now(),
        txId: (JSON.parse(raw) as Json).payload.transaction.id,
      });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('sandbox: network faults without SANDBOX_FAULTS=1', () => {
  let sb: RunningSandbox;
  beforeAll(async () => void running.push((sb = await startSandbox(groupSeed().seed))));
  afterAll(async () => sb?.close());

  it('refuses PUT /sandbox/faults with 403 and injects nothing', async () => {
    const r = await send('PUT', `${sb.url}/sandbox/faults`, { errors: { share: 1 } });
    expect(r.status).toBe(403);
    expect(r.body.err.message).toMatch(/SANDBOX_FAULTS=1/);
    expect((await send('GET', `${sb.url}/sandbox/faults`)).body).toMatchObject({ enabled: false, config: {} });
    expect((await send('GET', `${sb.url}/tf/simple/vasps`)).status).toBe(200);
  });
});

describe('sandbox: network faults (SANDBOX_FAULTS=1)', () => {
  const group = groupSeed();
  const sim = randomDid();
  group.seed.vasps.push({ did: sim, name: 'Simulated Beneficiary', simulated: true });
  let sb: RunningSandbox;
  let bearer: string;
  const faults = (config: unknown) => send('PUT', `${sb.url}/sandbox/faults`, config);
  beforeAll(async () => {
    sb = await startSandbox(group.seed, { faults: true });
    running.push(sb);
    bearer = await tokenFor(sb, group.gatewayUser);
  });
  afterEach(async () => {
    await faults({});
  });
  afterAll(async () => sb?.close());

  it('are off by default, checked field by field, and counted', async () => {
    expect((await send('GET', `${sb.url}/sandbox/faults`)).body).toMatchObject({
      enabled: true,
      config: {},
      injected: { errors: 0 },
    });
    for (const [body, field] of [
      [{ errors: { share: 2 } }, 'errors.share'],
      [{ latency: { share: 1, ms: -1 } }, 'latency.ms'],
      [{ errors: { share: 0, status: 404 } }, 'errors.status'],
      [{ webhooks: { duplicate: 'all' } }, 'webhooks.duplicate'],
      [{ storm: {} }, 'body.storm'],
      [[], 'body'],
    ] as const) {
      const r = await faults(body);
      expect(r.status).toBe(400);
      expect(r.body.err.message).toContain(field);
    }
  });

  it('errors: a 5xx share per route, before the handler; other routes, /healthz and /sandbox/* unaffected', async () => {
    expect((await faults({ errors: { share: 0, routes: { 'POST /webhook': 1 } } })).status).toBe(200);
    const hook = await receiver();
    try {
      const r = await send('POST', `${sb.url}/webhook`, { vaspDID: group.subA, url: hook.url }, bearer);
      expect(r.status).toBe(503);
      expect(r.body.err.code).toBe(503);
      // Nothing was done: no webhook is set.
      await faults({});
      expect(
        (await send('GET', `${sb.url}/webhook?vaspDID=${encodeURIComponent(group.subA)}`, undefined, bearer)).status,
      ).toBe(404);
      await faults({ errors: { share: 1, status: 502 } });
      expect((await send('GET', `${sb.url}/tf/simple/vasps`)).status).toBe(502);
      expect((await send('GET', `${sb.url}/healthz`)).status).toBe(200);
      const view = await send('GET', `${sb.url}/sandbox/faults`);
      expect(view.body.injected.errors).toBe(1);
    } finally {
      await hook.close();
    }
  });

  it('exempts /healthz and /sandbox/* by the route the router matched: percent-encoded, they are not faulted either (issue 25)', async () => {
    await faults({ errors: { share: 1, status: 502 }, rateLimit: { share: 0 } });
    // The router decodes `%68` to `h` and `%73` to `s`: these are /healthz and /sandbox/faults.
    expect((await send('GET', `${sb.url}/%68ealthz`)).status).toBe(200);
    const view = await send('GET', `${sb.url}/%73andbox/faults`, undefined, sb.testToken);
    expect([view.status, view.body.injected?.errors]).toEqual([200, 0]);
    // A network route is faulted however its path is spelled.
    expect((await send('GET', `${sb.url}/tf/simple/%76asps`)).status).toBe(502);
  });

  it('rateLimit: 429 with Retry-After (10 s unless set)', async () => {
    await faults({ rateLimit: { share: 1 } });
    const r = await send('GET', `${sb.url}/tf/simple/vasps/${encodeURIComponent(group.subA)}`);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('10');
    await faults({ rateLimit: { share: 1, retryAfterSeconds: 3 } });
    expect((await send('GET', `${sb.url}/tf/simple/vasps`)).headers.get('retry-after')).toBe('3');
  });

  it('latency: the request is handled after the added delay', async () => {
    await faults({ latency: { share: 1, ms: 700 } });
    const t0 = Date.now();
    expect((await send('GET', `${sb.url}/tf/simple/vasps`)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
  });

  it('dropAfterCommit: the connection is dropped after the change was made, so the caller sees only an error', async () => {
    await faults({ dropAfterCommit: { share: 1 } });
    const hook = await receiver();
    try {
      await expect(
        fetch(`${sb.url}/webhook`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ vaspDID: group.subB, url: hook.url }),
        }),
      ).rejects.toThrow();
      // A GET is not dropped by default, and shows the change happened.
      expect(
        (await send('GET', `${sb.url}/webhook?vaspDID=${encodeURIComponent(group.subB)}`, undefined, bearer)).body,
      ).toEqual({ vaspDID: group.subB, url: hook.url });
      expect((await send('GET', `${sb.url}/sandbox/faults`)).body.injected.dropAfterCommit).toBe(1);
    } finally {
      await hook.close();
    }
  });

  describe('webhooks and key rotation', () => {
    let hook: Awaited<ReturnType<typeof receiver>>;
    const create = async () => {
      const r = await send(
        'POST',
        `${sb.url}/tx/create`,
        {
          transactionAsset: 'ETH',
          transactionAmount: '7',
          originatorVASPdid: group.subA,
          beneficiaryVASPdid: sim,
          transactionBlockchainInfo: { destination: `0x${randomSecret().replace(/[^a-z0-9]/gi, '')}` },
        },
        bearer,
      );
      expect(r.status).toBe(200);
      return r.body.id as string;
    };
    beforeAll(async () => {
      hook = await receiver();
      // The originator's webhook; the simulated beneficiary stays silent, so each transfer makes one delivery (created).
      expect((await send('POST', `${sb.url}/webhook`, { vaspDID: group.subA, url: hook.url }, bearer)).status).toBe(
        200,
      );
      expect((await send('PUT', `${sb.url}/sandbox/counterparties/${sim}`, { default: 'silent' })).status).toBe(200);
    });
    afterAll(async () => hook?.close());

    it('duplicate: every delivery arrives twice with the same webhook-id', async () => {
      await faults({ webhooks: { duplicate: 1 } });
      const id = await create();
      const got = await eventually(async () => {
        const mine = hook.received.filter((d) => d.txId === id);
        return mine.length >= 2 ? mine : undefined;
      });
      expect(got[0]!.id).toBe(got[1]!.id);
    });

    it('late: the first attempt waits the given time', async () => {
      await faults({ webhooks: { late: { share: 1, ms: 2000 } } });
      const t0 = Date.now();
      const id = await create();
      const got = await eventually(async () => hook.received.find((d) => d.txId === id), 15_000);
      expect(got.at - t0).toBeGreaterThanOrEqual(1900);
    });

    it('reorder: held-back deliveries are overtaken by later ones', async () => {
      await faults({ webhooks: { reorder: 1, reorderMaxMs: 4000 } });
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await create());
      const got = await eventually(async () => {
        const arrived = [...new Set(hook.received.filter((d) => ids.includes(d.txId)).map((d) => d.txId))];
        return arrived.length === ids.length ? arrived : undefined;
      }, 20_000);
      expect(got).not.toEqual(ids); // 8 uniform delays in the same order: 1 in 40,320
      expect((await send('GET', `${sb.url}/sandbox/faults`)).body.injected.webhookReorder).toBe(8);
    });

    it('keyRotation: the counterparty rotates its pii_didkey after a lookup, and still reads data encrypted to the old key', async () => {
      await faults({ keyRotation: { share: 1 } });
      const looked = (await send('GET', `${sb.url}/tf/simple/vasps/${sim}?fields=pii_didkey`)).body
        .pii_didkey as string;
      const now = await eventually(async () => {
        const k = (await send('GET', `${sb.url}/sandbox/counterparties/${sim}`)).body;
        return k.pii_didkey !== looked && k.published ? (k.pii_didkey as string) : undefined;
      });
      await faults({});
      expect((await send('GET', `${sb.url}/tf/simple/vasps/${sim}?fields=pii_didkey`)).body.pii_didkey).toBe(now);
      // Data the originator encrypted to the key it looked up (now rotated away) is still read by the counterparty.
      const piiBearer = await tokenFor(sb, group.gatewayUser, `${sb.url}/pii`);
      const entries = encryptIvms101(
        { originator: fixture.originator, beneficiary: fixture.beneficiary },
        createDidKeyRecord(),
        [looked],
      );
      const put = await send(
        'POST',
        `${sb.url}/pii/put`,
        { fromDID: group.subA, toDID: sim, data: entries },
        piiBearer,
      );
      const tx = await send(
        'POST',
        `${sb.url}/tx/create`,
        {
          transactionAsset: 'ETH',
          transactionAmount: '7',
          originatorVASPdid: group.subA,
          beneficiaryVASPdid: sim,
          transactionBlockchainInfo: { destination: '0xrotated' },
          pii: unflattenIvms101(put.body),
        },
        bearer,
      );
      const r = await eventually(async () => {
        const x = await send('GET', `${sb.url}/sandbox/counterparties/${sim}/received/${tx.body.id}`);
        return x.status === 200 ? x.body : undefined;
      });
      expect(r).toMatchObject({ mode: 'end-to-end', decrypted: true });
    });
  });
});
