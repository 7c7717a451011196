import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkWebhookSignature,
  signWebhook,
  verifyWebhookSignature,
  webhookHeaders,
} from '../../lib/webhook-signature';
import {
  eventually,
  groupSeed,
  randomSecret,
  startSandbox,
  type RunningSandbox,
  addOutsiderVasp,
} from '../harness/platform';

const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Json;
}

/** A webhook receiver: records every request; `respond` decides the status per request. */
async function receiver(respond: (r: Received, n: number) => number = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const r = { path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) as Json };
      received.push(r);
      res.statusCode = respond(r, received.filter((x) => x.path === r.path).length);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('lib/webhook-signature', () => {
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  it('signs Svix-style and verifies from either header spelling, refusing tampering, other secrets and stale timestamps', () => {
    const body = '{"message":"notification.transactionUpdated"}';
    const headers = webhookHeaders(secret, 'msg_1', body, 1_700_000_000);
    expect(headers['webhook-signature']).toBe(signWebhook(secret, 'msg_1', 1_700_000_000, body));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const now = { nowSeconds: 1_700_000_010 };
    expect(verifyWebhookSignature(secret, headers, body, now)).toBe(true);
    const svixOnly = {
      'svix-id': headers['svix-id'],
      'svix-timestamp': headers['svix-timestamp'],
      'svix-signature': headers['svix-signature'],
    };
    expect(verifyWebhookSignature(secret, svixOnly, Buffer.from(body), now)).toBe(true);
    expect(verifyWebhookSignature(secret, new Headers(headers), body, now)).toBe(true);
    expect(
      verifyWebhookSignature(
        secret,
        { ...headers, 'webhook-signature': `v1,bogus ${headers['webhook-signature']}` },
        body,
        now,
      ),
    ).toBe(true);
    expect(verifyWebhookSignature(secret, headers, body + ' ', now)).toBe(false);
    expect(verifyWebhookSignature(secret, { ...headers, 'webhook-id': 'msg_2' }, body, now)).toBe(false);
    expect(verifyWebhookSignature('whsec_' + Buffer.alloc(32, 8).toString('base64'), headers, body, now)).toBe(false);
    expect(checkWebhookSignature(secret, headers, body, { nowSeconds: 1_700_000_000 + 301 })).toEqual({
      ok: false,
      reason: expect.stringMatching(/tolerance/),
    });
    expect(checkWebhookSignature(secret, {}, body, now).ok).toBe(false);
  });
});

describe('sandbox: notification webhooks', () => {
  const group = groupSeed();
  const { did: third, user: thirdUser } = addOutsiderVasp(group.seed);
  let sb: RunningSandbox;
  const tokens = new Map<string, string>();
  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  async function call(
    method: string,
    path: string,
    body?: unknown,
    who: { clientId: string; clientSecret: string } = group.gatewayUser,
  ) {
    if (!tokens.has(who.clientId)) {
      const r = await fetch(`${sb.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: who.clientId,
          client_secret: who.clientSecret,
          grant_type: 'client_credentials',
          audience: sb.url,
        }),
      });
      tokens.set(who.clientId, ((await r.json()) as { access_token: string }).access_token);
    }
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens.get(who.clientId)!}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  }
  const deliveries = async (transactionId: string) =>
    (
      (await (
        await fetch(`${sb.url}/sandbox/webhooks/deliveries?transactionId=${transactionId}`, {
          headers: sb.testHeaders(),
        })
      ).json()) as { deliveries: Json[] }
    ).deliveries;
  const createTx = (over: Record<string, unknown> = {}) =>
    call('POST', '/tx/create', {
      transactionAsset: 'ETH',
      transactionAmount: '42',
      originatorVASPdid: group.subA,
      beneficiaryVASPdid: group.external,
      transactionBlockchainInfo: { destination: `0x${randomSecret()}` },
      ...over,
    });

  it('registers, reads and deletes a webhook per VASP; only the VASP (or its gateway) may', async () => {
    const set = await call('POST', '/webhook', { vaspDID: group.subB, url: 'https://hooks.example/one' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      vaspDID: group.subB,
      url: 'https://hooks.example/one',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect((await call('GET', `/webhook?vaspDID=${group.subB}`)).body).toEqual({
      vaspDID: group.subB,
      url: 'https://hooks.example/one',
    });
    const again = await call('POST', '/webhook', { vaspDID: group.subB, url: 'https://hooks.example/two' });
    expect(again.body.secret).toBe(set.body.secret);
    const rotated = await call('POST', '/webhook', {
      vaspDID: group.subB,
      url: 'https://hooks.example/two',
      rotateSecret: true,
    });
    expect(rotated.body.secret).not.toBe(set.body.secret);
    expect((await call('GET', `/webhook?vaspDID=${group.subB}`, undefined, thirdUser)).status).toBe(403);
    expect(
      (await call('POST', '/webhook', { vaspDID: group.subB, url: 'https://evil.example' }, thirdUser)).status,
    ).toBe(403);
    expect((await call('POST', '/webhook', { vaspDID: group.subB, url: 'ftp://x' })).status).toBe(400);
    expect(await call('DELETE', '/webhook', { vaspDID: group.subB })).toEqual({
      status: 200,
      body: { isDeleted: true, message: 'Webhook deleted' },
    });
    const gone = await call('GET', `/webhook?vaspDID=${group.subB}`);
    expect(gone.status).toBe(404);
    expect(gone.body.err.name).toBe('NotFoundError');
  });

  it('pushes every change, signed, without personal data, to both sides (the originator via its gateway) — and retries a 500', async () => {
    // The gateway's endpoint fails its first delivery with a 500; the external VASP's always answers 200.
    const rx = await receiver((r, n) => (r.path === '/gateway' && n === 1 ? 500 : 200));
    try {
      const gw = await call('POST', '/webhook', { vaspDID: group.gateway, url: `${rx.url}/gateway` });
      const ex = await call(
        'POST',
        '/webhook',
        { vaspDID: group.external, url: `${rx.url}/external` },
        group.externalUser,
      );
      const tx = await createTx({ originator: fixture.originator, beneficiary: fixture.beneficiary });
      expect(tx.body.status).toBe('SENT');
      const confirmed = await call('POST', `/tx/confirm?id=${tx.body.id}`, undefined, group.externalUser);
      expect(confirmed.body.status).toBe('ACK');

      const ofTx = (path: string) =>
        rx.received.filter((r) => r.path === path && r.body.payload.transaction.id === tx.body.id);
      await eventually(
        async () => (ofTx('/gateway').length >= 3 && ofTx('/external').length >= 2 ? true : undefined),
        15_000,
      );
      for (const r of [...ofTx('/gateway'), ...ofTx('/external')]) {
        const secret = r.path === '/gateway' ? gw.body.secret : ex.body.secret;
        expect(verifyWebhookSignature(secret, r.headers, r.raw)).toBe(true);
        expect(r.headers['svix-id']).toBe(r.headers['webhook-id']);
        expect(r.body).toMatchObject({
          message: 'notification.transactionUpdated',
          version: '1',
          payload: { transaction: { id: tx.body.id } },
        });
        expect(r.body.payload.transaction.pii).toBeUndefined();
        expect(r.body.payload.transaction.ivms101).toBeUndefined();
        expect(r.raw).not.toContain('ivms101');
      }
      // The other endpoint's secret does not verify.
      expect(verifyWebhookSignature(ex.body.secret, ofTx('/gateway')[0]!.headers, ofTx('/gateway')[0]!.raw)).toBe(
        false,
      );
      // Retried after the 500 with the same webhook-id: the receiver sees that message twice (de-duplicate on it).
      const gwIds = ofTx('/gateway').map((r) => r.headers['webhook-id']);
      expect(new Set(gwIds).size).toBe(2);
      expect(gwIds.length).toBe(3);
      const statuses = (path: string) =>
        [
          ...new Set(ofTx(path).map((r) => `${String(r.headers['webhook-id'])}:${r.body.payload.transaction.status}`)),
        ].map((s) => s.split(':')[1]);
      expect(statuses('/gateway').sort()).toEqual(['ACK', 'SENT']);
      expect(statuses('/external').sort()).toEqual(['ACK', 'SENT']);
      const log = await eventually(async () => {
        const d = await deliveries(tx.body.id);
        return d.length === 4 && d.every((x) => x.state === 'delivered') ? d : undefined;
      });
      expect(
        log
          .filter((d) => d.vaspDID === group.gateway)
          .map((d) => d.attempts)
          .sort(),
      ).toEqual([1, 2]);
    } finally {
      await call('DELETE', '/webhook', { vaspDID: group.gateway });
      await call('DELETE', '/webhook', { vaspDID: group.external }, group.externalUser);
      await rx.close();
    }
  });

  it('does not retry a 4xx (other than 408/429), retries a 429, and tells the beneficiary nothing before it is sent', async () => {
    const rx = await receiver((r, n) => (r.path === '/gone' ? 410 : r.path === '/busy' && n === 1 ? 429 : 200));
    try {
      await call('POST', '/webhook', { vaspDID: group.subA, url: `${rx.url}/gone` });
      await call('POST', '/webhook', { vaspDID: group.external, url: `${rx.url}/busy` }, group.externalUser);
      const tx = await createTx();
      const log = await eventually(async () => {
        const d = await deliveries(tx.body.id);
        return d.length === 2 && d.every((x) => x.state !== 'pending') ? d : undefined;
      });
      expect(log.find((d) => d.vaspDID === group.subA)).toMatchObject({
        state: 'failed',
        attempts: 1,
        lastStatus: 410,
      });
      expect(log.find((d) => d.vaspDID === group.external)).toMatchObject({ state: 'delivered', attempts: 2 });

      // Created without a beneficiary VASP (NEW): only the originator side hears of it.
      const unsent = await createTx({ beneficiaryVASPdid: undefined });
      expect(unsent.body.status).toBe('NEW');
      await eventually(async () => ((await deliveries(unsent.body.id)).length === 1 ? true : undefined));
      expect((await deliveries(unsent.body.id))[0].vaspDID).toBe(group.subA);
    } finally {
      await call('DELETE', '/webhook', { vaspDID: group.subA });
      await call('DELETE', '/webhook', { vaspDID: group.external }, group.externalUser);
      await rx.close();
    }
  });

  it('retries network errors, and drops what is pending once the webhook is deleted', async () => {
    const rx = await receiver();
    const closedUrl = rx.url;
    await rx.close(); // nothing listens there any more
    try {
      await call('POST', '/webhook', { vaspDID: group.subB, url: `${closedUrl}/down` });
      const tx = await createTx({ originatorVASPdid: group.subB, beneficiaryVASPdid: third });
      const retrying = await eventually(async () => {
        const d = (await deliveries(tx.body.id))[0];
        return d && d.attempts >= 2 ? d : undefined;
      });
      expect(retrying).toMatchObject({ state: 'pending', lastError: expect.stringMatching(/^network error/) });
      await call('DELETE', '/webhook', { vaspDID: group.subB });
      const dropped = await eventually(async () => {
        const d = (await deliveries(tx.body.id))[0];
        return d?.state === 'dropped' ? d : undefined;
      }, 30_000);
      expect(dropped.finishedAt).toBeTruthy();
    } finally {
      await call('DELETE', '/webhook', { vaspDID: group.subB });
    }
  });
});
