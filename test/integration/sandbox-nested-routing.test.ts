import { createServer, type Server } from 'node:http';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import type { AddressInfo } from 'node:net';
import { verifyAddressQuery, ADDRESS_SIGNATURE_HEADER } from '../../lib/address-webhook-signature';
import { eventually, groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('sandbox: nested VASPs — address books, address webhooks, manual redirect and confirm', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let token: string;
  let externalToken: string;
  let hook: Server;
  let hookUrl: string;
  let hookSecret = '';
  const hookCalls: { url: string; signed: boolean }[] = [];
  const ownedBySubB = new Set(['0xbbbb000000000000000000000000000000000001']);

  const call = async (method: string, path: string, body?: unknown, bearer = token) => {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const tokenFor = (c: { clientId: string; clientSecret: string }) => sb.token(c);

  const send = (destination: string) => simulateTransfer(sb, { from: g.external, to: g.gateway, destination });
  const settle = (id: string, until: (tx: Json) => boolean) =>
    eventually(
      async () => {
        const { body } = await call('GET', `/tx/info?id=${id}`);
        return until(body) ? body : undefined;
      },
      10_000,
      50,
    );
  const routingOutcome = (id: string) =>
    eventually(
      async () =>
        (
          await sb.pool.query<{ outcome: string }>(
            `select outcome from routing_tasks where transaction_id = $1 and state = 'done'`,
            [id],
          )
        ).rows[0]?.outcome,
      10_000,
      50,
    );

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    token = await tokenFor(g.gatewayUser);
    externalToken = await tokenFor(g.externalUser);
    hook = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const signed = verifyAddressQuery(hookSecret, 'GET', req.url!, req.headers[ADDRESS_SIGNATURE_HEADER] as string);
      hookCalls.push({ url: req.url!, signed });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ owns: signed && ownedBySubB.has(url.searchParams.get('address') ?? '') }));
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/owns`;
    // The external VASP becomes a simulated counterparty (with a did:key) so it can send.
    await sb.simulateCounterparty(g.external);
    expect(
      (
        await call('POST', '/address/registerCustomer', {
          vaspDID: g.subA,
          asset: 'ETH',
          address: '0xaaaa000000000000000000000000000000000001',
          customerRef: 'alice',
        })
      ).status,
    ).toBe(200);
    const registered = await call('POST', `/integrations/${g.subB}/address-query-webhook`, {
      url: hookUrl,
      params: '?source=network',
    });
    expect(registered.status).toBe(200);
    hookSecret = registered.body.secret as string;
  });
  afterAll(async () => {
    await sb?.close();
    await new Promise((r) => hook?.close(r));
  });

  it('redirects by the subsidiaries’ address books and confirms (autoconfirm on by default)', async () => {
    const tx = await send('0xaaaa000000000000000000000000000000000001');
    expect(tx.beneficiaryVASPdid).toBe(g.gateway);
    const routed = await settle(tx.id, (t) => t.status === 'ACK');
    expect(routed.beneficiaryVASPdid).toBe(g.subA);
    expect(routed.actions.map((a: { action: string }) => a.action)).toEqual(
      expect.arrayContaining(['redirect', 'confirm']),
    );
  });

  it('asks the subsidiaries’ address webhooks, signed, when no address book has the address', async () => {
    const tx = await send('0xbbbb000000000000000000000000000000000001');
    const routed = await settle(tx.id, (t) => t.status === 'ACK');
    expect(routed.beneficiaryVASPdid).toBe(g.subB);
    const asked = hookCalls.find((c) => c.url.includes('0xbbbb'))!;
    expect(asked.signed).toBe(true);
    expect(asked.url).toMatch(/^\/owns\?source=network&asset=ETH&address=0xbbbb/);
  });

  it('leaves an address nobody owns at the gateway; redirect and confirm by hand register it for next time', async () => {
    const unknown = '0xcccc000000000000000000000000000000000001';
    const tx = await send(unknown);
    expect(await routingOutcome(tx.id)).toBe('left at the gateway: no subsidiary owns the address');
    expect((await call('GET', `/tx/info?id=${tx.id}`)).body).toMatchObject({
      status: 'SENT',
      beneficiaryVASPdid: g.gateway,
    });

    expect((await call('POST', `/tx/redirect?id=${tx.id}&to=${g.external}`)).body.err).toMatchObject({
      name: 'NotabeneTransactionError',
    });
    // The originator is a party to the transfer but not the gateway holding it (the facts sheet's 400 for txRedirect).
    const byOriginator = await call('POST', `/tx/redirect?id=${tx.id}&to=${g.subA}`, undefined, externalToken);
    expect(byOriginator).toMatchObject({ status: 400, body: { err: { name: 'UserDIDNotAdminforVASPError' } } });
    const redirected = await call('POST', `/tx/redirect?id=${tx.id}&to=${g.subA}`);
    expect(redirected.body).toMatchObject({ status: 'SENT', beneficiaryVASPdid: g.subA });
    expect((await call('POST', `/tx/redirect?id=${tx.id}&to=${g.subB}`)).status).toBe(400);
    expect((await call('POST', `/tx/confirm?id=${tx.id}`)).body.status).toBe('ACK');

    const next = await send(unknown);
    const routed = await settle(next.id, (t) => t.status === 'ACK');
    expect(routed.beneficiaryVASPdid).toBe(g.subA);
  });

  it('with autoredirect off, nothing is redirected automatically; with autoconfirm off, a redirect is not confirmed', async () => {
    expect((await call('PUT', `/tf/vasps/${g.gateway}/settings`, { autoredirect: false })).status).toBe(200);
    const held = await send('0xaaaa000000000000000000000000000000000001');
    expect(await routingOutcome(held.id)).toBe('left at the gateway: autoredirect is off');

    expect(
      (await call('PUT', `/tf/vasps/${g.gateway}/settings`, { autoredirect: true, autoconfirm: false })).status,
    ).toBe(200);
    const unconfirmed = await send('0xaaaa000000000000000000000000000000000001');
    expect(await routingOutcome(unconfirmed.id)).toBe(`redirected to ${g.subA} (address book)`);
    expect((await call('GET', `/tx/info?id=${unconfirmed.id}`)).body).toMatchObject({
      status: 'SENT',
      beneficiaryVASPdid: g.subA,
    });
    await call('PUT', `/tf/vasps/${g.gateway}/settings`, { autoredirect: true, autoconfirm: true });
  });

  it('issues a customer token bound to one subsidiary, only with auth.customerToken on it', async () => {
    const issued = await call('POST', '/auth/customerToken', { vaspDID: g.subA, customerRef: 'alice' });
    expect(issued.body).toMatchObject({ token_type: 'Bearer', scope: 'customer' });
    const claims = JSON.parse(
      Buffer.from(String(issued.body.access_token).split('.')[1]!, 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(claims).toMatchObject({ vaspDID: g.subA, customerRef: 'alice', scope: 'customer' });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(300);
    expect(
      (await call('POST', '/auth/customerToken', { vaspDID: g.subA, customerRef: 'alice' }, externalToken)).status,
    ).toBe(403);
    expect((await call('POST', '/auth/customerToken', { vaspDID: g.subA })).body.err.message).toMatch(/customerRef/);
  });
});

describe('sandbox: automatic confirmation of a direct transfer follows autoconfirm', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox(g.seed);
  });
  afterAll(async () => sb?.close());

  it('confirms a transfer to an address in the beneficiary’s book only while autoconfirm is on', async () => {
    const [gw, ext] = [await sb.token(g.gatewayUser), await sb.token(g.externalUser)];
    const post = async (path: string, body: unknown, bearer: string, method = 'POST') =>
      (
        await fetch(`${sb.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json() as Promise<Json>;
    await post(
      '/address/registerCustomer',
      { vaspDID: g.subA, asset: 'BTC', address: 'bc1qdirectaddress0001', customerRef: 'c1' },
      gw,
    );
    const create = () =>
      post(
        '/tx/create',
        {
          transactionAsset: 'BTC',
          transactionAmount: '5000',
          originatorVASPdid: g.external,
          beneficiaryVASPdid: g.subA,
          transactionBlockchainInfo: { destination: 'bc1qdirectaddress0001' },
        },
        ext,
      );
    expect((await create()).status).toBe('ACK');
    await post(`/tf/vasps/${g.gateway}/settings`, { autoconfirm: false }, gw, 'PUT');
    expect((await create()).status).toBe('SENT');
  });
});

describe('sandbox: the gateway hears of a message only after the automatic routing had its turn', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let received: { at: number; status: string; beneficiary: string }[] = [];
  let receiver: Server;
  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const tx = (JSON.parse(body) as { payload: { transaction: { status: string; beneficiaryVASPdid: string } } })
          .payload.transaction;
        received.push({ at: Date.now(), status: tx.status, beneficiary: tx.beneficiaryVASPdid });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const token = await sb.token(g.gatewayUser);
    await fetch(`${sb.url}/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        vaspDID: g.gateway,
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      }),
    });
    await fetch(`${sb.url}/address/registerCustomer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        vaspDID: g.subA,
        asset: 'ETH',
        address: '0xaaaa0000000000000000000000000000000000ff',
        customerRef: 'x',
      }),
    });
    await sb.simulateCounterparty(g.external);
  });
  afterAll(async () => {
    await sb?.close();
    await new Promise((r) => receiver?.close(r));
  });

  it('holds the creation notice until routing is done, then delivers it (an unrouted message is still notified)', async () => {
    const send = async (destination: string) =>
      (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination })).id;
    const routed = await send('0xaaaa0000000000000000000000000000000000ff');
    await eventually(async () => (received.length >= 3 ? true : undefined), 10_000, 20);
    const { rows } = await sb.pool.query<{ body: { actions: { action: string; createdAt: string }[] } }>(
      'select body from transactions where id = $1',
      [routed],
    );
    const redirectedAt = Date.parse(rows[0]!.body.actions.find((a) => a.action === 'redirect')!.createdAt);
    // The creation notice (still at the gateway) reached the gateway only once the network had redirected it.
    const creation = received.find((r) => r.beneficiary === g.gateway)!;
    expect(creation.status).toBe('SENT');
    expect(creation.at).toBeGreaterThanOrEqual(redirectedAt);
    received = [];
    await send('0xdddd0000000000000000000000000000000000ff');
    const unrouted = await eventually(async () => received[0], 10_000, 20);
    expect(unrouted).toMatchObject({ status: 'SENT', beneficiary: g.gateway });
  });
});
