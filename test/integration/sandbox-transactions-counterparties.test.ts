import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { encryptIvms101, unflattenIvms101 } from '../../lib/ivms101';
import { eventually, groupSeed, randomDid, randomSecret, startSandbox, type RunningSandbox } from '../harness/platform';

const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('sandbox: simulated counterparty VASPs', () => {
  const group = groupSeed();
  // A beneficiary VASP nobody operates: the sandbox plays it.
  const sim = randomDid();
  group.seed.vasps.push({ did: sim, name: 'Simulated Beneficiary', simulated: true });
  let sb: RunningSandbox;
  let bearer: string;
  let piiBearer: string;
  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    const token = async (audience: string) => {
      const r = await fetch(`${sb.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: group.gatewayUser.clientId,
          client_secret: group.gatewayUser.clientSecret,
          grant_type: 'client_credentials',
          audience,
        }),
      });
      return ((await r.json()) as { access_token: string }).access_token;
    };
    bearer = await token(sb.url);
    piiBearer = await token(`${sb.url}/pii`);
  });
  afterAll(async () => sb?.close());

  const send = async (method: string, url: string, body?: unknown, auth?: string) => {
    const r = await fetch(url, {
      method,
      headers: {
        ...((auth ?? (url.includes('/sandbox/') ? sb.testToken : undefined)) && {
          authorization: `Bearer ${auth ?? sb.testToken}`,
        }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const addr = (label: string) => `0x${label}${randomSecret().replace(/[^a-z0-9]/gi, '')}`;
  const create = (destination: string, over: Record<string, unknown> = {}) =>
    send(
      'POST',
      `${sb.url}/tx/create`,
      {
        transactionAsset: 'ETH',
        transactionAmount: '7',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: sim,
        transactionBlockchainInfo: { destination },
        ...over,
      },
      bearer,
    );
  const status = async (id: string) =>
    (await send('GET', `${sb.url}/tx/info?id=${id}`, undefined, bearer)).body.status as string;
  const reaches = (id: string, want: string, timeoutMs = 10_000) =>
    eventually(async () => ((await status(id)) === want ? true : undefined), timeoutMs);
  const received = async (id: string) => {
    const r = await send('GET', `${sb.url}/sandbox/counterparties/${sim}/received/${id}`);
    return r.status === 200 ? r.body : undefined;
  };

  const addresses = {
    accept: addr('acc'),
    reject: addr('rej'),
    decline: addr('dec'),
    silent: addr('sil'),
    late: addr('late'),
    notReady: addr('nr'),
    ack: addr('ack'),
  };
  let piiDidKey: string;

  it('is configured per destination address, and publishes a did:key for the simulated VASP', async () => {
    const set = await send('PUT', `${sb.url}/sandbox/counterparties/${sim}`, {
      default: 'silent',
      behaviours: {
        [addresses.accept]: 'accept',
        [addresses.reject]: 'reject',
        [addresses.decline]: 'decline',
        [addresses.silent]: 'silent',
        [addresses.late]: 'late:2',
        [addresses.notReady]: 'notReady',
        [addresses.ack]: { behaviour: 'ack', afterSeconds: 0 },
      },
    });
    expect(set.status).toBe(200);
    expect(set.body.pii_didkey).toMatch(/^did:key:z6Mk/);
    expect(set.body.behaviours[addresses.late]).toEqual({ behaviour: 'accept', afterSeconds: 2 });
    piiDidKey = set.body.pii_didkey;
    const dir = await send('GET', `${sb.url}/tf/simple/vasps/${sim}?fields=pii_didkey`);
    expect(dir.body.pii_didkey).toBe(piiDidKey);
    expect((await send('PUT', `${sb.url}/sandbox/counterparties/${sim}/behaviours`, { x: 'dance' })).status).toBe(400);
    expect((await send('PUT', `${sb.url}/sandbox/counterparties/${randomDid()}`, {})).status).toBe(404);
    expect((await send('GET', `${sb.url}/sandbox/counterparties/${sim}`)).body).toMatchObject({
      default: { behaviour: 'silent', afterSeconds: 0 },
      published: true,
    });
  });

  it('keeps the key a real VASP already publishes, unless told to replace it', async () => {
    const own = createDidKeyRecord().did;
    const pub = await send(
      'POST',
      `${sb.url}/tf/vasps/update`,
      { did: group.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: own }] }] },
      await (async () => {
        const r = await fetch(`${sb.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: group.externalUser.clientId,
            client_secret: group.externalUser.clientSecret,
            grant_type: 'client_credentials',
            audience: sb.url,
          }),
        });
        return ((await r.json()) as { access_token: string }).access_token;
      })(),
    );
    expect(pub.status).toBe(200);
    const kept = await send('PUT', `${sb.url}/sandbox/counterparties/${group.external}`, { default: 'silent' });
    expect(kept.body).toMatchObject({ published: false });
    expect((await send('GET', `${sb.url}/tf/simple/vasps/${group.external}?fields=pii_didkey`)).body.pii_didkey).toBe(
      own,
    );
    const replaced = await send('PUT', `${sb.url}/sandbox/counterparties/${group.external}`, { publishKey: true });
    expect(replaced.body).toMatchObject({ published: true, pii_didkey: kept.body.pii_didkey });
    expect((await send('GET', `${sb.url}/tf/simple/vasps/${group.external}?fields=pii_didkey`)).body.pii_didkey).toBe(
      kept.body.pii_didkey,
    );
    expect(await send('DELETE', `${sb.url}/sandbox/counterparties/${group.external}`)).toEqual({
      status: 200,
      body: { isDeleted: true },
    });
  });

  it.each([
    ['accept', 'ACCEPTED', ['create', 'approve', 'confirm', 'accept']],
    ['reject', 'REJECTED', ['create', 'approve', 'reject']],
    ['decline', 'DECLINED', ['create', 'approve', 'confirm', 'decline']],
    ['notReady', 'NOT_READY', ['create', 'approve', 'notReady']],
    ['ack', 'ACK', ['create', 'approve', 'confirm']],
  ] as const)(
    '%s: the simulated beneficiary brings the transaction to %s through the transition table',
    async (behaviour, final, history) => {
      const tx = (await create(addresses[behaviour])).body;
      expect(tx.status).toBe('SENT');
      await reaches(tx.id, final);
      await new Promise((r) => setTimeout(r, 300)); // nothing further happens
      const info = (await send('GET', `${sb.url}/tx/info?id=${tx.id}`, undefined, bearer)).body;
      expect(info.status).toBe(final);
      expect(info.actions.map((a: Json) => a.action)).toEqual(history);
      expect(info.actions.slice(2).every((a: Json) => a.issuerDID === sim)).toBe(true);
    },
  );

  it('silent: receives the transfer and stays SENT', async () => {
    const tx = (await create(addresses.silent)).body;
    await eventually(() => received(tx.id));
    await new Promise((r) => setTimeout(r, 1000));
    expect(await status(tx.id)).toBe('SENT');
    // An address with no behaviour set gets the default (silent here).
    const other = (await create(addr('unset'))).body;
    await eventually(() => received(other.id));
    expect(await status(other.id)).toBe('SENT');
  });

  it('late: answers after the configured delay', async () => {
    const started = Date.now();
    const tx = (await create(addresses.late)).body;
    await eventually(() => received(tx.id));
    expect(await status(tx.id)).toBe('SENT');
    await reaches(tx.id, 'ACCEPTED', 15_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it('reads the personal data with its own key: end-to-end to its pii_didkey decrypts, data for another key does not', async () => {
    const originatorKey = createDidKeyRecord();
    const record = { originator: fixture.originator, beneficiary: fixture.beneficiary };
    const putFor = async (recipient: string) => {
      const entries = encryptIvms101(record, originatorKey, [recipient]);
      const put = await send(
        'POST',
        `${sb.url}/pii/put`,
        { fromDID: group.subA, toDID: sim, data: entries },
        piiBearer,
      );
      expect(put.status).toBe(200);
      return { tree: unflattenIvms101(put.body), n: entries.length };
    };
    const good = await putFor(piiDidKey);
    const tx = (await create(addresses.accept, { pii: good.tree })).body;
    const r = await eventually(() => received(tx.id));
    expect(r).toEqual({
      vaspDID: sim,
      transactionId: tx.id,
      mode: 'end-to-end',
      decrypted: true,
      fields: good.n,
      receivedAt: expect.any(String),
    });
    expect(JSON.stringify(r)).not.toContain('primaryIdentifier');

    const wrong = await putFor(createDidKeyRecord().did);
    const tx2 = (await create(addresses.accept, { pii: wrong.tree })).body;
    const r2 = await eventually(() => received(tx2.id));
    expect(r2).toMatchObject({ mode: 'end-to-end', decrypted: false, fields: 0 });

    // Hosted mode: plain IVMS101, encrypted by the service to the beneficiary's service-managed key as well.
    const tx3 = (await create(addresses.accept, { originator: fixture.originator })).body;
    expect(await eventually(() => received(tx3.id))).toMatchObject({ mode: 'hosted', decrypted: true });
    expect((await received(tx3.id)).fields).toBeGreaterThan(5);
  });
});
