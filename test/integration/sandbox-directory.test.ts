import { randomBytes } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';
import { createDidKeyRecord, parseDidKey } from '../../lib/crypto';
import { groupSeed, randomDid, startSandbox, type RunningSandbox } from '../harness/platform';

type Json = Record<string, unknown>;

describe('sandbox: directory, profile updates, settings and escrow keys', () => {
  const group = groupSeed();
  // A subsidiary-only user (no role on the gateway) and a read-only user of subsidiary A.
  const subUser = {
    did: randomDid(),
    clientId: `sub-${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
  };
  const readOnly = {
    did: randomDid(),
    clientId: `ro-${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
  };
  group.seed.users.push(
    {
      did: subUser.did,
      name: 'Sub B Operator',
      email: 'ops@b.example',
      roles: [{ vaspDID: group.subB, permissions: ['trustframework.updateVASP'] }],
      credentials: [{ clientId: subUser.clientId, clientSecret: subUser.clientSecret }],
    },
    {
      did: readOnly.did,
      name: 'Sub A Viewer',
      email: 'view@a.example',
      roles: [{ vaspDID: group.subA, permissions: ['address.registerCustomer'] }],
      credentials: [{ clientId: readOnly.clientId, clientSecret: readOnly.clientSecret }],
    },
  );
  let sb: RunningSandbox;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  const token = (c: { clientId: string; clientSecret: string }, audience: string = sb.url) => sb.token(c, audience);

  async function call(
    method: string,
    path: string,
    opts: { as?: { clientId: string; clientSecret: string }; audience?: string; body?: unknown; bearer?: string } = {},
  ) {
    const headers: Record<string, string> = {};
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
    else if (opts.as) headers.authorization = `Bearer ${await token(opts.as, opts.audience)}`;
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  }

  const publish = (vaspDid: string, value: unknown, as = group.gatewayUser) =>
    call('POST', '/tf/vasps/update', {
      as,
      body: { did: vaspDid, fields: [{ fieldName: 'pii_didkey', values: [{ value }] }] },
    });
  const enc = encodeURIComponent;

  describe('POST /tf/vasps/update', () => {
    it('publishes a pii_didkey and answers the profile in the tf_VASPInfo shape, newest value first', async () => {
      const first = createDidKeyRecord(randomBytes(32)).did;
      const second = createDidKeyRecord(randomBytes(32)).did;
      expect((await publish(group.subA, first)).status).toBe(200);
      const r = await publish(group.subA, second);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual([
        'did',
        'documents',
        'fields',
        'hasAdmin',
        'isActiveReceiver',
        'isActiveSender',
      ]);
      expect(r.body).toMatchObject({
        did: group.subA,
        documents: [],
        hasAdmin: true,
        isActiveSender: true,
        isActiveReceiver: true,
      });
      const fields = r.body.fields as {
        fieldName: string;
        values: { value: string; issuer: string; issuanceDate: string; expirationDate: null }[];
      }[];
      const key = fields.find((f) => f.fieldName === 'pii_didkey')!;
      expect(key.values.map((v) => v.value)).toEqual([second, first]);
      expect(key.values[0]).toMatchObject({ issuer: group.gatewayUser.did, expirationDate: null });
      expect(new Date(key.values[0]!.issuanceDate).toString()).not.toBe('Invalid Date');
      expect(fields.find((f) => f.fieldName === 'name')!.values[0]!.value).toBe('Subsidiary A');

      const view = await call('GET', `/tf/simple/vasps/${enc(group.subA)}?fields=pii_didkey`);
      expect(view.body.pii_didkey).toBe(second);
    });

    it('answers 401 without a token or with a personal-data token, 403 without the permission, 404 for an unknown VASP', async () => {
      const value = createDidKeyRecord(randomBytes(32)).did;
      const body = { did: group.subA, fields: [{ fieldName: 'pii_didkey', values: [{ value }] }] };
      const none = await call('POST', '/tf/vasps/update', { body });
      expect(none).toMatchObject({ status: 401, body: { err: { name: 'UnauthorizedError', code: 401 } } });
      expect(
        (await call('POST', '/tf/vasps/update', { body, as: group.gatewayUser, audience: `${sb.url}/pii` })).status,
      ).toBe(401);
      const external = await publish(group.subA, value, group.externalUser);
      expect(external).toMatchObject({
        status: 403,
        body: { err: { name: 'UserDIDNotAdminforVASPError', code: 403 } },
      });
      // A subsidiary's own user cannot touch the gateway or a sibling; a user without updateVASP cannot update.
      expect((await publish(group.gateway, value, subUser)).status).toBe(403);
      expect((await publish(group.subA, value, subUser)).status).toBe(403);
      expect((await publish(group.subB, value, subUser)).status).toBe(200);
      expect((await publish(group.subA, value, readOnly)).status).toBe(403);
      const unknown = await publish(randomDid(), value);
      expect(unknown).toMatchObject({ status: 404, body: { err: { name: 'NotFoundError', code: 404 } } });
    });

    it('refuses a pii_didkey that is not an Ed25519 did:key, naming the field, and changes nothing', async () => {
      const before = (await call('GET', `/tf/simple/vasps/${enc(group.subA)}?fields=pii_didkey`)).body.pii_didkey;
      const x25519 = `did:key:${base58btc.encode(Uint8Array.from([0xec, 0x01, ...randomBytes(32)]))}`;
      const short = `did:key:${base58btc.encode(Uint8Array.from([0xed, 0x01, ...randomBytes(31)]))}`;
      for (const [bad, rule] of [
        ['did:ethr:0x1234', /must be a did:key with an Ed25519 public key/],
        ['did:key:z6Mk!!notbase58', /base58btc/],
        [x25519, /it holds an X25519 key/],
        [short, /the key part must be 48 characters, got 4[67]/],
        [42, /must be a did:key/],
      ] as const) {
        const r = await publish(group.subA, bad);
        expect(r.status).toBe(400);
        const err = r.body.err as { name: string; message: string };
        expect(err.name).toBe('ValidationError');
        expect(err.message).toMatch(/^fields\[0\]\.values\[0\]\.value: /);
        expect(err.message).toMatch(rule);
      }
      const two = await call('POST', '/tf/vasps/update', {
        as: group.gatewayUser,
        body: {
          did: group.subA,
          fields: [
            {
              fieldName: 'pii_didkey',
              values: [
                { value: createDidKeyRecord(randomBytes(32)).did },
                { value: createDidKeyRecord(randomBytes(32)).did },
              ],
            },
          ],
        },
      });
      expect(two.status).toBe(400);
      expect((two.body.err as { message: string }).message).toMatch(
        /fields\[0\]\.values: must hold exactly one did:key/,
      );
      const did = await call('POST', '/tf/vasps/update', {
        as: group.gatewayUser,
        body: { did: group.subA, fields: [{ fieldName: 'did', values: [{ value: 'did:ethr:0x0' }] }] },
      });
      expect((did.body.err as { message: string }).message).toMatch(/fields\[0\]\.fieldName: did cannot be updated/);
      const empty = await call('POST', '/tf/vasps/update', {
        as: group.gatewayUser,
        body: { did: group.subA, fields: [] },
      });
      expect(empty.status).toBe(400);
      expect((await call('GET', `/tf/simple/vasps/${enc(group.subA)}?fields=pii_didkey`)).body.pii_didkey).toBe(before);
      expect(parseDidKey(before).did).toBe(before);
    });
  });

  describe('GET /tf/simple/vasps/:vaspDID', () => {
    it('answers anonymously with the default fields plus one string per requested field (left out when unset, never null)', async () => {
      await call('POST', '/tf/vasps/update', {
        as: group.gatewayUser,
        body: {
          did: group.gateway,
          fields: [{ fieldName: 'website', values: [{ value: 'https://gateway.example' }] }],
        },
      });
      const r = await call('GET', `/tf/simple/vasps/${enc(group.gateway)}?fields=name,did,pii_didkey,website`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        did: group.gateway,
        name: 'Gateway VASP',
        website: 'https://gateway.example',
        hasAdmin: true,
        isNotifiable: true,
        isActiveSender: false,
        isActiveReceiver: true,
      });
      for (const unset of ['logo', 'incorporationCountry', 'documents', 'pii_didkey'])
        expect(r.body).not.toHaveProperty(unset);
      // A string, as the spec types it: JSON of who issued each field's current value.
      expect(JSON.parse(r.body.issuers as string)).toMatchObject({ website: { issuerDid: group.gatewayUser.did } });
      // The external VASP has users too; a VASP nobody administers has no admin.
      const authed = await call('GET', `/tf/simple/vasps/${enc(group.external)}`, { as: group.externalUser });
      expect(authed.body).toMatchObject({ did: group.external, hasAdmin: true, isActiveSender: true });
    });

    it('answers 404 for an unknown VASP, 400 for a bad field name, 401 for a bad token', async () => {
      expect((await call('GET', `/tf/simple/vasps/${enc(randomDid())}`)).body).toMatchObject({
        err: { name: 'NotFoundError', code: 404 },
      });
      expect((await call('GET', `/tf/simple/vasps/${enc(group.subA)}?fields=pii_didkey,no%20such`)).status).toBe(400);
      expect((await call('GET', `/tf/simple/vasps/${enc(group.subA)}`, { bearer: 'forged.token.value' })).status).toBe(
        401,
      );
    });
  });

  describe('GET /tf/simple/vasps', () => {
    it('pages, searches and leaves subsidiaries out by default', async () => {
      const all = await call('GET', '/tf/simple/vasps?all=true&listingType=all');
      const dids = (all.body.vasps as { did: string }[]).map((v) => v.did);
      expect(dids).toEqual(expect.arrayContaining([group.gateway, group.subA, group.subB, group.external]));
      expect(all.body.pagination).toMatchObject({
        page: 0,
        total: dids.length,
        per_page: dids.length,
        order: 'name:ASC',
      });

      const gateways = await call('GET', '/tf/simple/vasps?all=true');
      const listed = (gateways.body.vasps as { did: string }[]).map((v) => v.did);
      expect(listed).toContain(group.gateway);
      expect(listed).not.toContain(group.subA);

      const search = await call(
        'GET',
        `/tf/simple/vasps?q=${enc('subsidiary')}&listingType=all&per_page=1&page=1&order=name:DESC&fields=pii_didkey`,
      );
      expect(search.status).toBe(200);
      expect(search.body.pagination).toMatchObject({ page: 1, per_page: 1, order: 'name:DESC' });
      expect((search.body.pagination as { total: number }).total).toBeGreaterThanOrEqual(2);
      const [item] = search.body.vasps as Json[];
      expect(Object.keys(item!)).toEqual(expect.arrayContaining(['did', 'name', 'hasAdmin', 'issuers']));
      expect(typeof item!.issuers).toBe('string');

      const page0 = await call('GET', `/tf/simple/vasps?q=${enc(group.subA.slice(-12))}&listingType=all`);
      expect((page0.body.vasps as { did: string }[]).map((v) => v.did)).toEqual([group.subA]);
      expect((await call('GET', '/tf/simple/vasps?order=secret:ASC')).status).toBe(400);
      expect((await call('GET', '/tf/simple/vasps?per_page=0')).status).toBe(400);
    });
  });

  describe('VASP settings', () => {
    it('defaults autoconfirm and autoredirect to true, applies partial updates, and checks access', async () => {
      const path = `/tf/vasps/${enc(group.gateway)}`;
      expect((await call('GET', `${path}/getSettings`, { as: group.gatewayUser })).body).toEqual({
        autoconfirm: true,
        autoredirect: true,
        vaspDiscoverability: true,
        statusToProcessBlockchain: null,
      });
      const put = await call('PUT', `${path}/settings`, {
        as: group.gatewayUser,
        body: { autoredirect: false, statusToProcessBlockchain: 'ACK' },
      });
      expect(put).toEqual({
        status: 200,
        body: { autoconfirm: true, autoredirect: false, vaspDiscoverability: true, statusToProcessBlockchain: 'ACK' },
      });
      await call('PUT', `${path}/settings`, { as: group.gatewayUser, body: { autoconfirm: false } });
      expect((await call('GET', `${path}/getSettings`, { as: group.gatewayUser })).body).toEqual({
        autoconfirm: false,
        autoredirect: false,
        vaspDiscoverability: true,
        statusToProcessBlockchain: 'ACK',
      });
      expect(
        (await call('PUT', `${path}/settings`, { as: group.gatewayUser, body: { autoconfirm: 'yes' } })).status,
      ).toBe(400);
      expect(
        (await call('PUT', `${path}/settings`, { as: group.externalUser, body: { autoconfirm: true } })).status,
      ).toBe(403);
      expect((await call('GET', `${path}/getSettings`, { as: group.externalUser })).status).toBe(403);
      expect((await call('GET', `${path}/getSettings`)).status).toBe(401);
      expect((await call('GET', `/tf/vasps/${enc(randomDid())}/getSettings`, { as: group.gatewayUser })).status).toBe(
        404,
      );
      // The gateway's users manage subsidiaries' settings too.
      expect(
        (
          await call('PUT', `/tf/vasps/${enc(group.subA)}/settings`, {
            as: group.gatewayUser,
            body: { autoconfirm: false },
          })
        ).status,
      ).toBe(200);
    });
  });

  describe('escrow keys (personal-data service)', () => {
    const pii = () => `${sb.url}/pii`;

    it('creates one escrow did:key per VASP on first request, returns only its public part, and rotates it', async () => {
      const get = (vasp: string, as = group.gatewayUser) =>
        call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(vasp)}`, { as, audience: pii() });
      const first = await get(group.subA);
      expect(first.status).toBe(200);
      const did = first.body.did as string;
      expect(parseDidKey(did).did).toBe(did);
      expect(did).toMatch(/^did:key:z6Mk/);
      expect(JSON.stringify(first.body)).not.toMatch(/privateKeyHex/);
      expect(first.body).toMatchObject({ provider: 'did:key', services: [] });
      expect((await get(group.subA)).body.did).toBe(did);
      // Concurrent first requests still make one key.
      const [a, b] = await Promise.all([get(group.subB), get(group.subB)]);
      expect(a.body.did).toBe(b.body.did);

      const rotated = await call('GET', `/pii/rotate-escrow-didkey?vaspDID=${enc(group.subA)}`, {
        as: group.gatewayUser,
        audience: pii(),
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.did).not.toBe(did);
      expect((await get(group.subA)).body.did).toBe(rotated.body.did);

      // The old key is kept (retired); seeds are stored only sealed (version byte, iv, 32-byte ciphertext, tag).
      const { rows } = await sb.pool.query<{ did_key: string; state: string; sealed_seed: Buffer }>(
        'select did_key, state, sealed_seed from escrow_keys where vasp_did = $1 order by id',
        [group.subA],
      );
      expect(rows.map((r) => [r.did_key, r.state])).toEqual([
        [did, 'retired'],
        [rotated.body.did, 'active'],
      ]);
      for (const r of rows) expect([r.sealed_seed.length, r.sealed_seed[0]]).toEqual([1 + 12 + 32 + 16, 1]);
    });

    it("answers 401 for an API-audience token, 403 for other VASPs' users, 404 for unknown VASPs, 400 without vaspDID", async () => {
      expect(
        (await call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(group.subA)}`, { as: group.gatewayUser })).status,
      ).toBe(401);
      expect((await call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(group.subA)}`)).status).toBe(401);
      const forbidden = await call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(group.subA)}`, {
        as: group.externalUser,
        audience: pii(),
      });
      expect(forbidden).toMatchObject({ status: 403, body: { err: { code: 403 } } });
      expect(
        (
          await call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(randomDid())}`, {
            as: group.gatewayUser,
            audience: pii(),
          })
        ).status,
      ).toBe(404);
      expect((await call('GET', '/pii/get-escrow-didkey', { as: group.gatewayUser, audience: pii() })).status).toBe(
        400,
      );
      // Reading is for any of the VASP's users; rotating needs trustframework.updateVASP.
      expect(
        (await call('GET', `/pii/get-escrow-didkey?vaspDID=${enc(group.subA)}`, { as: readOnly, audience: pii() }))
          .status,
      ).toBe(200);
      expect(
        (await call('GET', `/pii/rotate-escrow-didkey?vaspDID=${enc(group.subA)}`, { as: readOnly, audience: pii() }))
          .status,
      ).toBe(403);
      expect(
        (await call('GET', `/pii/rotate-escrow-didkey?vaspDID=${enc(group.gateway)}`, { as: subUser, audience: pii() }))
          .status,
      ).toBe(403);
    });
  });
});
