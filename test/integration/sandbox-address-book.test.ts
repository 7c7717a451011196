// Longer than 400 lines on purpose: the address book's cases share one sandbox and seed (beforeAll), and splitting
// the file would start them again for each part.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SignJWT } from 'jose';
import type { Seed } from '../../sandbox/seed';
import { findOwners, type AddressBookOptions } from '../../sandbox/address-book';
import { eventually, groupSeed, randomDid, randomSecret, startSandbox, type RunningSandbox } from '../harness/platform';

/** The harness's sandbox with address-book settings of the test's choosing (small limits, short URLs). */
const startSandboxWith = (seed: Seed, addressBook: Partial<AddressBookOptions>): Promise<RunningSandbox> =>
  startSandbox(seed, { addressBook });

interface UploadResponse {
  text: string;
  uploadedFile: {
    locationURL: string;
    mimeType: string;
    name: string;
    metadata: { key: string; uploadType: string; userDID: string; extra: { vaspDID: string; counter: number } };
  };
}

interface UploadView {
  id: string;
  status: string;
  counts: { rowsRead: number; registered: number; updated: number; rejected: number };
  rejectedRows: { line: number; asset: string; address: string; customerRef: string; reason: string }[];
  rejectedRowsTruncated: boolean;
  error: string | null;
  vaspDID: string;
  userDID: string;
  fileName: string;
  counter: number;
}

interface Email {
  id: number;
  to: string;
  subject: string;
  text: string;
  data: {
    kind: string;
    uploadId: string;
    status: string;
    counts: UploadView['counts'];
    rejectedRows: UploadView['rejectedRows'];
  };
}

interface Listing {
  pagination: { page: number; per_page: number; total: number };
  metadata: { source: string };
  data: { address: string; owner_vasp_did: string; customer_did: string | null; customer_ref: string }[];
}

const HEADER = 'asset,address,customerRef';
const csv = (rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
const evm = (i: number, salt: string) => `0x${salt}${i.toString(16).padStart(40 - salt.length, '0')}`;

jest.setTimeout(120_000);

describe('sandbox: address book', () => {
  const group = groupSeed();
  // A user who may act for subsidiary A but holds no address-book permission on it.
  const viewerOnly = { did: randomDid(), clientId: `vo-${randomSecret()}`, clientSecret: randomSecret() };
  group.seed.users.push({
    did: viewerOnly.did,
    name: 'Read Only',
    email: 'readonly@gateway.example',
    roles: [{ vaspDID: group.subA, permissions: ['auth.customerToken'] }],
    credentials: [{ clientId: viewerOnly.clientId, clientSecret: viewerOnly.clientSecret }],
  });
  // A user allowed to upload to subsidiary B only; the test of withdrawn permissions changes its role.
  const uploader = { did: randomDid(), clientId: `up-${randomSecret()}`, clientSecret: randomSecret() };
  group.seed.users.push({
    did: uploader.did,
    name: 'Uploader',
    email: 'uploader@gateway.example',
    roles: [{ vaspDID: group.subB, permissions: ['address.uploadAddressList'] }],
    credentials: [{ clientId: uploader.clientId, clientSecret: uploader.clientSecret }],
  });
  let sb: RunningSandbox;
  let small: RunningSandbox;
  let shortLived: RunningSandbox;
  const smallSpool = mkdtempSync(join(tmpdir(), 'address-spool-'));
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    small = await startSandboxWith(group.seed, { maxUploadBytes: 64 * 1024, spoolDir: smallSpool });
    shortLived = await startSandboxWith(group.seed, { uploadUrlTtlSeconds: 1 });
  });
  afterAll(async () => {
    await sb?.close();
    await small?.close();
    await shortLived?.close();
  });

  const token = async (c: { clientId: string; clientSecret: string } = group.gatewayUser, base = sb.url) => {
    const key = `${base}|${c.clientId}`;
    if (!tokens.has(key)) {
      const r = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: c.clientId,
          client_secret: c.clientSecret,
          grant_type: 'client_credentials',
          audience: base,
        }),
      });
      tokens.set(key, ((await r.json()) as { access_token: string }).access_token);
    }
    return tokens.get(key)!;
  };

  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { body?: unknown; as?: { clientId: string; clientSecret: string }; base?: string } = {},
  ) => {
    const base = opts.base ?? sb.url;
    const headers: Record<string, string> = { authorization: `Bearer ${await token(opts.as, base)}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${base}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
  };

  const uploadUrl = async (
    vasp: string,
    opts: { as?: { clientId: string; clientSecret: string }; base?: string } = {},
  ) => {
    const r = await call<{ uploadUrl: string }>('GET', `/address/upload/${vasp}`, opts);
    expect(r.status).toBe(200);
    return r.body.uploadUrl;
  };

  const postFile = async (url: string, content: string | Uint8Array, opts: { name?: string; field?: string } = {}) => {
    const form = new FormData();
    form.append(
      opts.field ?? 'file',
      new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type: 'text/csv' }),
      opts.name ?? 'addresses.csv',
    );
    const r = await fetch(url, { method: 'POST', body: form });
    const text = await r.text();
    return {
      status: r.status,
      body: (text ? JSON.parse(text) : undefined) as UploadResponse & {
        err?: { name: string; code: number; message: string };
      },
    };
  };

  const uploadIdOf = (r: UploadResponse) => r.uploadedFile.locationURL.split('/').pop()!;

  /** Sandboxes a test starts of its own, besides the three above. */
  const others: RunningSandbox[] = [];
  /** The test routes' headers of whichever of this file's sandboxes `base` is. */
  const testHeaders = (base: string) => [sb, small, shortLived, ...others].find((s) => s?.url === base)!.testHeaders();
  const status = async (id: string, base = sb.url) =>
    (await (await fetch(`${base}/sandbox/uploads/${id}`, { headers: testHeaders(base) })).json()) as UploadView;

  const finished = (id: string, base = sb.url) =>
    eventually(async () => {
      const s = await status(id, base);
      return s.status === 'completed' || s.status === 'failed' ? s : undefined;
    }, 60_000);

  const summaryEmail = async (to: string, uploadId: string, base = sb.url) =>
    eventually(async () => {
      const r = (await (
        await fetch(`${base}/sandbox/outbox?to=${encodeURIComponent(to)}`, { headers: testHeaders(base) })
      ).json()) as { emails: Email[] };
      return r.emails.find((e) => e.data.uploadId === uploadId);
    });

  const list = (vasp: string, query = '', as?: { clientId: string; clientSecret: string }) =>
    call<Listing>('GET', `/v1/addresses?vasp_did=${vasp}&source=ADDRESS_GRAPH${query}`, { as });

  it('issues an upload URL on the sandbox carrying its own short-lived credential, and accepts a CSV there', async () => {
    const url = await uploadUrl(group.gateway);
    expect(url.startsWith(`${sb.url}/upload?token=`)).toBe(true);
    const claims = JSON.parse(
      Buffer.from(new URL(url).searchParams.get('token')!.split('.')[1]!, 'base64url').toString(),
    ) as Record<string, number | string>;
    expect(claims).toMatchObject({ sub: group.gatewayUser.did, vaspDID: group.gateway });
    expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(600);

    const r = await postFile(url, csv(['ETH,0x1111111111111111111111111111111111111111,Alice@SG1']), {
      name: 'book.csv',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      text: 'File uploaded!',
      uploadedFile: {
        locationURL: expect.stringMatching(new RegExp(`^${sb.url}/sandbox/uploads/[0-9a-f-]{36}$`)),
        mimeType: 'text/csv',
        name: 'book.csv',
        metadata: {
          key: expect.any(String),
          uploadType: 'addressList',
          userDID: group.gatewayUser.did,
          extra: { vaspDID: group.gateway, counter: expect.any(Number) },
        },
      },
    });
    expect(Number.isInteger(r.body.uploadedFile.metadata.extra.counter)).toBe(true);
    const done = await finished(uploadIdOf(r.body));
    expect(done).toMatchObject({
      status: 'completed',
      counts: { rowsRead: 1, registered: 1, updated: 0, rejected: 0 },
      fileName: 'book.csv',
    });
  });
  it('answers before processing ends, then registers valid rows in batches and mails a summary to the uploader', async () => {
    // 120,000 rows (~6 MB): processing takes far longer than storing the file.
    const rows = Array.from({ length: 120_000 }, (_, i) => `ETH,${evm(i, 'a1')},cust-${i % 5000}`);
    rows.push(`ETH,${evm(7, 'a1')},again`); // a duplicate of row 8, several batches later
    const url = await uploadUrl(group.subA);
    const r = await postFile(url, csv(rows), { name: 'big.csv' });
    expect(r.status).toBe(200);
    const id = uploadIdOf(r.body);
    const early = await status(id);
    expect(['queued', 'processing']).toContain(early.status);
    expect(early.counts.rowsRead).toBeLessThan(120_001);

    const done = await finished(id);
    expect(done).toMatchObject({
      status: 'completed',
      vaspDID: group.subA,
      userDID: group.gatewayUser.did,
      counts: { rowsRead: 120_001, registered: 120_000, updated: 0, rejected: 1 },
    });
    expect(done.rejectedRows).toEqual([
      {
        line: 120_002,
        asset: 'ETH',
        address: evm(7, 'a1'),
        customerRef: 'again',
        reason: expect.stringMatching(/^duplicate in file/),
      },
    ]);
    const mail = await summaryEmail('ops@gateway.example', id);
    expect(mail.subject).toMatch(/big\.csv/);
    expect(mail.text).toContain('Rows rejected:       1');
    expect(mail.text).toContain('line 120002: duplicate in file');
    expect(mail.data).toMatchObject({ kind: 'addressListSummary', status: 'completed', counts: done.counts });
    expect((await list(group.subA, '&per_page=1')).body.pagination.total).toBe(120_000);
  });
  it('rejects invalid rows with their line and reason, and registers tag rows and their master address', async () => {
    const url = await uploadUrl(group.gateway);
    const r = await postFile(
      url,
      [
        HEADER,
        'XRP,rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:12345,Bob@SG1', // 2 tag row
        'XRP,rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY,Master', //      3 its master address
        ',0x2222222222222222222222222222222222222222,x', //       4 empty asset
        'ETH,,x', //                                             5 empty address
        'XRP,rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:,x', //          6 empty tag
        'XRP,:999,x', //                                         7 empty address before the tag
        'ETH,0x3333333333333333333333333333333333333333', //     8 two columns
        'xrp,rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:12345,Again', // 9 same asset and address as line 2
        'ETH,0xAbCdEf0000000000000000000000000000000001,Carol', // 10 checksum case, stored lower-case
        '',
        'ETH,"0x44 44",x', //                                    12 whitespace in the address
        'ETH,0x5555555555555555555555555555555555555555,Dan',
        'ETH,0x5555"x,y', //                                     14 malformed quoting
        '',
      ].join('\r\n'),
    );
    expect(r.status).toBe(200);
    const done = await finished(uploadIdOf(r.body));
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({ rowsRead: 12, registered: 4, updated: 0, rejected: 8 });
    expect(done.rejectedRows.map((x) => [x.line, x.reason])).toEqual([
      [4, 'empty asset'],
      [5, 'empty address'],
      [6, 'address: malformed tag form: expected <address>:<tag> with a non-empty address and tag'],
      [7, 'address: malformed tag form: expected <address>:<tag> with a non-empty address and tag'],
      [8, 'wrong number of columns: expected 3 (asset,address,customerRef), found 2'],
      [9, 'duplicate in file: same asset and address as line 2'],
      [12, 'address: must not contain whitespace, commas or control characters'],
      [14, expect.stringMatching(/^malformed CSV: /)],
    ]);

    const mail = await summaryEmail('ops@gateway.example', done.id);
    expect(mail.data.counts).toEqual(done.counts);
    expect(mail.data.rejectedRows.map((x) => x.line)).toEqual(done.rejectedRows.map((x) => x.line));
    expect(mail.text).toContain('line 4: empty asset');

    const owner = await call(
      'GET',
      `/v1/addresses/address-ownerships/rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:12345?vasp_did=${group.gateway}&asset=xrp`,
    );
    expect(owner).toEqual({
      status: 200,
      body: {
        owner_vasp_did: group.gateway,
        owner_vasp_name: 'Gateway VASP',
        address: 'rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:12345',
        address_type: 'HOSTED',
        asset: 'XRP',
        source: 'ADDRESS_GRAPH',
      },
    });
    // An unregistered tag of a registered master address still finds the VASP that operates the master.
    const viaMaster = await call(
      'GET',
      `/v1/addresses/address-ownerships/rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:777?vasp_did=${group.gateway}&asset=XRP`,
    );
    expect(viaMaster.body).toMatchObject({
      owner_vasp_did: group.gateway,
      address: 'rPEPPER7kfTD9w2To4CQk6UCfQHM9c6GDY:777',
    });
    const checksum = await call(
      'GET',
      `/v1/addresses/address-ownerships/0xABCDEF0000000000000000000000000000000001?vasp_did=${group.gateway}&asset=ETH`,
    );
    expect(checksum.body).toMatchObject({
      owner_vasp_did: group.gateway,
      address: '0xabcdef0000000000000000000000000000000001',
    });
  });

  it('registers one address with registerCustomer, idempotently, and validates the body in the network error shape', async () => {
    const body = {
      vaspDID: group.subB,
      asset: 'ETH',
      address: '0x6666666666666666666666666666666666666666',
      customerRef: 'Erin@SG7',
    };
    const first = await call('POST', '/address/registerCustomer', { body });
    expect(first).toEqual({
      status: 200,
      body: { vaspDID: group.subB, asset: 'ETH', address: body.address, customerRef: 'Erin@SG7', status: 'registered' },
    });
    expect((await call('POST', '/address/registerCustomer', { body })).body).toMatchObject({ status: 'unchanged' });
    expect(
      (await call('POST', '/address/registerCustomer', { body: { ...body, customerRef: 'Erin@SG8' } })).body,
    ).toMatchObject({ status: 'updated' });
    const caip = await call('POST', '/address/registerCustomer', {
      body: {
        vaspDID: group.subB,
        asset: { caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
        address: '0x7777777777777777777777777777777777777777',
        customerRef: 'Fay',
      },
    });
    expect(caip.body).toMatchObject({
      asset: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      status: 'registered',
    });
    const noAsset = await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subB, address: 'bc1qnoasset0000000000000000000000000000000', customerRef: 'Gus' },
    });
    expect(noAsset.body).toMatchObject({ asset: null, status: 'registered' });
    // Registered without an asset, it answers for any asset.
    expect(
      (
        await call(
          'GET',
          `/v1/addresses/address-ownerships/bc1qnoasset0000000000000000000000000000000?vasp_did=${group.subB}&asset=BTC`,
        )
      ).body,
    ).toMatchObject({ owner_vasp_did: group.subB, asset: 'BTC' });

    const listed = await list(group.subB, '&per_page=1000');
    expect(listed.body.data).toContainEqual({
      address: body.address,
      owner_vasp_did: group.subB,
      customer_did: expect.stringMatching(/^did:ethr:0x[0-9a-f]{40}$/),
      customer_ref: 'Erin@SG8',
    });

    const missing = await call('POST', '/address/registerCustomer', { body: { vaspDID: group.subB, address: 'x1' } });
    expect(missing).toEqual({
      status: 400,
      body: {
        err: {
          name: 'ValidationError',
          code: 400,
          message: 'customerRef: is required',
          stack: 'ValidationError: customerRef: is required',
        },
      },
    });
    const badTag = await call('POST', '/address/registerCustomer', { body: { ...body, address: 'rABC:' } });
    expect(badTag.status).toBe(400);
    expect(badTag.body).toMatchObject({ err: { message: expect.stringMatching(/^address: malformed tag form/) } });
    const badAsset = await call('POST', '/address/registerCustomer', { body: { ...body, asset: 'not an asset' } });
    expect(badAsset.body).toMatchObject({ err: { code: 400, message: expect.stringMatching(/^asset: /) } });
    const badDid = await call('POST', '/address/registerCustomer', { body: { ...body, vaspDID: 'nope' } });
    expect(badDid.body).toMatchObject({ err: { code: 400, message: expect.stringMatching(/^vaspDID: /) } });

    const unknown = await call('POST', '/address/registerCustomer', { body: { ...body, vaspDID: randomDid() } });
    expect(unknown).toMatchObject({ status: 404, body: { err: { name: 'NotFoundError', code: 404 } } });
    const foreign = await call('POST', '/address/registerCustomer', { body, as: group.externalUser });
    expect(foreign).toMatchObject({ status: 403, body: { err: { name: 'UserDIDNotAdminforVASPError', code: 403 } } });
    const noPermission = await call('POST', '/address/registerCustomer', {
      body: { ...body, vaspDID: group.subA },
      as: viewerOnly,
    });
    expect(noPermission.status).toBe(403);
  });

  it("lists a VASP's book page by page (2,500 rows over 3 pages of 1,000) and validates the query", async () => {
    const vasp = group.external;
    const rows = Array.from({ length: 2500 }, (_, i) => `BTC,bc1qpage${String(i).padStart(6, '0')},ref-${i}`);
    const r = await postFile(await uploadUrl(vasp, { as: group.externalUser }), csv(rows));
    expect(r.status).toBe(200);
    expect((await finished(uploadIdOf(r.body))).counts).toMatchObject({ registered: 2500, rejected: 0 });

    const pages = await Promise.all(
      [0, 1, 2, 3].map((p) => list(vasp, `&page=${p}&per_page=1000`, group.externalUser)),
    );
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 200]);
    expect(pages.map((p) => p.body.data.length)).toEqual([1000, 1000, 500, 0]);
    for (const [i, p] of pages.entries()) {
      expect(p.body.pagination).toEqual({ page: i, per_page: 1000, total: 2500 });
      expect(p.body.metadata).toEqual({ source: 'ADDRESS_GRAPH' });
    }
    const seen = pages.flatMap((p) => p.body.data.map((d) => d.address));
    expect(new Set(seen).size).toBe(2500);
    expect(seen).toEqual([...seen].sort());
    expect(pages[0]!.body.data[0]).toEqual({
      address: 'bc1qpage000000',
      owner_vasp_did: vasp,
      customer_did: expect.stringMatching(/^did:ethr:0x/),
      customer_ref: 'ref-0',
    });

    // Pages follow the book as it changes: an entry added in front shifts every later page by one.
    const page0 = (await list(vasp, '&page=0&per_page=1000', group.externalUser)).body.data;
    expect((await list(vasp, '&page=1&per_page=1000', group.externalUser)).body.data[0]!.address).toBe(
      'bc1qpage001000',
    );
    const added = await call('POST', '/address/registerCustomer', {
      body: { vaspDID: vasp, asset: 'BTC', address: 'bc1qaaaa', customerRef: 'first' },
      as: group.externalUser,
    });
    expect(added.status).toBe(200);
    const shifted = (await list(vasp, '&page=1&per_page=1000', group.externalUser)).body;
    expect(shifted.pagination.total).toBe(2501);
    expect(shifted.data[0]!.address).toBe(page0[999]!.address);
    await call('DELETE', `/v1/addresses?addresses=bc1qaaaa&vasp_did=${vasp}`, { as: group.externalUser });
    expect((await list(vasp, '&page=1&per_page=1000', group.externalUser)).body.data[0]!.address).toBe(
      'bc1qpage001000',
    );

    expect((await list(vasp, '&source_type=INTERNAL&per_page=1', group.externalUser)).body.pagination.total).toBe(2500);
    expect((await list(vasp, '&source_type=EXTERNAL', group.externalUser)).body).toEqual({
      pagination: { page: 0, per_page: 100, total: 0 },
      metadata: { source: 'ADDRESS_GRAPH' },
      data: [],
    });
    const tooMany = await list(vasp, '&per_page=1001', group.externalUser);
    expect(tooMany).toEqual({
      status: 400,
      body: {
        err: {
          name: 'ValidationError',
          code: 400,
          message: 'per_page: must be a whole number from 1 to 1000',
          stack: 'ValidationError: per_page: must be a whole number from 1 to 1000',
        },
      },
    });
    expect((await list(vasp, '&page=-1', group.externalUser)).body).toMatchObject({
      err: { message: expect.stringMatching(/^page: /) },
    });
    expect((await call('GET', `/v1/addresses?vasp_did=${vasp}`, { as: group.externalUser })).body).toMatchObject({
      err: { code: 400, message: 'source: is required' },
    });
    expect((await call('GET', '/v1/addresses?source=ADDRESS_GRAPH', { as: group.externalUser })).body).toMatchObject({
      err: { code: 400, message: 'vasp_did: is required' },
    });
  });

  it('deletes addresses (202 {}), under every asset, and only from the named VASP', async () => {
    const vasp = group.subB;
    for (const [asset, address] of [
      ['USDT', '0x8888888888888888888888888888888888888888'],
      ['ETH', '0x8888888888888888888888888888888888888888'],
      ['ETH', '0x99999999999999999999999999999999999999ab'],
    ]) {
      expect(
        (
          await call('POST', '/address/registerCustomer', {
            body: { vaspDID: vasp, asset, address, customerRef: 'del' },
          })
        ).status,
      ).toBe(200);
    }
    expect(
      (
        await call('POST', '/address/registerCustomer', {
          body: {
            vaspDID: group.subA,
            asset: 'ETH',
            address: '0x99999999999999999999999999999999999999ab',
            customerRef: 'keep',
          },
        })
      ).status,
    ).toBe(200);
    const before = (await list(vasp, '&per_page=1')).body.pagination.total;

    const del = await call(
      'DELETE',
      `/v1/addresses?addresses=0x8888888888888888888888888888888888888888,0x99999999999999999999999999999999999999AB&vasp_did=${vasp}`,
    );
    expect(del).toEqual({ status: 202, body: {} });
    expect((await list(vasp, '&per_page=1')).body.pagination.total).toBe(before - 3);
    const gone = await call(
      'GET',
      `/v1/addresses/address-ownerships/0x8888888888888888888888888888888888888888?vasp_did=${vasp}&asset=ETH`,
    );
    expect(gone).toMatchObject({ status: 404, body: { err: { name: 'NotFoundError', code: 404 } } });
    // Subsidiary A's entry for the same address stays.
    expect(
      (
        await call(
          'GET',
          `/v1/addresses/address-ownerships/0x99999999999999999999999999999999999999ab?vasp_did=${vasp}&asset=ETH`,
        )
      ).body,
    ).toMatchObject({ owner_vasp_did: group.subA });

    expect((await call('DELETE', `/v1/addresses?addresses=a,,b&vasp_did=${vasp}`)).status).toBe(400);
    expect((await call('DELETE', `/v1/addresses?vasp_did=${vasp}`)).body).toMatchObject({
      err: { message: 'addresses: is required' },
    });
    expect(
      (await call('DELETE', `/v1/addresses?addresses=x&vasp_did=${vasp}`, { as: group.externalUser })).status,
    ).toBe(403);
    expect((await call('DELETE', `/v1/addresses?addresses=x&vasp_did=${group.subA}`, { as: viewerOnly })).status).toBe(
      403,
    );
  });

  it('looks up ownership by address: found, unknown (404), several unrelated owners (404), and validates the query', async () => {
    const addr = '0x1212121212121212121212121212121212121212';
    expect(
      (await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.gateway}&asset=ETH`)).status,
    ).toBe(404);
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subA, asset: 'ETH', address: addr, customerRef: 'a' },
    });
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subB, asset: 'ETH', address: addr, customerRef: 'b' },
    });
    // Two subsidiaries of one gateway: the first registration wins, as the network resolves beneficiaries.
    const nested = await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.external}&asset=ETH`, {
      as: group.externalUser,
    });
    expect(nested).toEqual({
      status: 200,
      body: {
        owner_vasp_did: group.subA,
        owner_vasp_name: 'Subsidiary A',
        address: addr,
        address_type: 'HOSTED',
        asset: 'ETH',
        source: 'ADDRESS_GRAPH',
      },
    });
    // Another asset is not the same entry.
    expect(
      (await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.gateway}&asset=USDC`)).status,
    ).toBe(404);
    // An unrelated VASP claiming the address too makes the owner ambiguous.
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.external, asset: 'ETH', address: addr, customerRef: 'x' },
      as: group.externalUser,
    });
    expect(
      (await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.gateway}&asset=ETH`)).status,
    ).toBe(404);

    expect(
      (await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.gateway}`)).body,
    ).toMatchObject({ err: { code: 400, message: 'asset: is required' } });
    expect((await call('GET', `/v1/addresses/address-ownerships/${addr}?asset=ETH`)).body).toMatchObject({
      err: { code: 400, message: 'vasp_did: is required' },
    });
    expect(
      (await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${randomDid()}&asset=ETH`)).status,
    ).toBe(404);
    expect(
      (
        await call('GET', `/v1/addresses/address-ownerships/${addr}?vasp_did=${group.gateway}&asset=ETH`, {
          as: group.externalUser,
        })
      ).status,
    ).toBe(403);
  });

  it("keeps tenancy: the external VASP's user cannot list, upload to or register for the group, nor the reverse", async () => {
    const listAsExternal = await list(group.subA, '', group.externalUser);
    expect(listAsExternal).toMatchObject({
      status: 403,
      body: { err: { name: 'UserDIDNotAdminforVASPError', code: 403 } },
    });
    expect((await list(group.gateway, '', group.externalUser)).status).toBe(403);
    expect((await list(group.external)).status).toBe(403);
    expect((await call('GET', `/address/upload/${group.subA}`, { as: group.externalUser })).status).toBe(403);
    expect((await call('GET', `/address/upload/${group.external}`)).status).toBe(403);
    expect((await call('GET', `/address/upload/${randomDid()}`)).status).toBe(404);
    // A user who may act for subsidiary A without address permissions may read its book but not upload to it.
    expect((await list(group.subA, '&per_page=1', viewerOnly)).status).toBe(200);
    expect((await call('GET', `/address/upload/${group.subA}`, { as: viewerOnly })).body).toMatchObject({
      err: { code: 403 },
    });
    // The gateway's user acts for its subsidiaries.
    expect((await list(group.subB, '&per_page=1')).status).toBe(200);
    const noToken = await fetch(`${sb.url}/v1/addresses?vasp_did=${group.subA}&source=ADDRESS_GRAPH`);
    expect(noToken.status).toBe(401);
  });

  it('refuses a file above the size limit with 413 while streaming, registering nothing; the URL stays usable', async () => {
    const vasp = group.subB;
    const before = (await list(vasp, '&per_page=1', undefined)).body.pagination.total;
    const url = await uploadUrl(vasp, { base: small.url });
    const rows = Array.from({ length: 3000 }, (_, i) => `ETH,${evm(i, 'f1')},big-${i}`); // ~150 KB > 64 KB
    const r = await postFile(url, csv(rows));
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({
      err: { name: 'PayloadTooLargeError', code: 413, message: `file: larger than the limit of ${64 * 1024} bytes` },
    });
    expect((await list(vasp, '&per_page=1')).body.pagination.total).toBe(before);
    const again = await postFile(url, csv(rows.slice(0, 10)));
    expect(again.status).toBe(200);
    expect((await finished(uploadIdOf(again.body), small.url)).counts.registered).toBe(10);
    // Used once, the URL is spent.
    expect((await postFile(url, csv(rows.slice(0, 1)))).body).toMatchObject({ err: { code: 409 } });
  });

  it('checks the size while streaming: a file just over the limit and a chunked body without Content-Length get 413', async () => {
    const vasp = group.subB;
    const before = (await list(vasp, '&per_page=1')).body.pagination.total;
    // ~70 KB: over the 64 KB limit, yet its Content-Length passes the up-front check, so only the byte count can refuse it.
    const justOver = Array.from({ length: 1400 }, (_, i) => `ETH,${evm(i, 'f2')},x`);
    const r = await postFile(await uploadUrl(vasp, { base: small.url }), csv(justOver));
    expect(csv(justOver).length).toBeGreaterThan(64 * 1024);
    expect(r.status).toBe(413);

    // A chunked body of 64 MB, generated as it is sent.
    const boundary = `----sandbox${randomSecret()}`;
    const enc = new TextEncoder();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(
          enc.encode(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="endless.csv"\r\nContent-Type: text/csv\r\n\r\n${HEADER}\n`,
          ),
        );
      },
      pull(c) {
        if (sent > 64 * 1024 * 1024) {
          c.enqueue(enc.encode(`\r\n--${boundary}--\r\n`));
          c.close();
          return;
        }
        const chunk = enc.encode(
          Array.from({ length: 500 }, (_, i) => `ETH,${evm(sent + i, 'f3')},chunked`).join('\n') + '\n',
        );
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const url = await uploadUrl(vasp, { base: small.url });
    const chunked = await fetch(url, {
      method: 'POST',
      body,
      duplex: 'half',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit).then(
      async (res) => ({ status: res.status, early: sent < 64 * 1024 * 1024, body: await res.json() }),
      (e: Error) => ({ status: 0, body: e.message }),
    );
    // The answer comes while the client is still sending: the server counted bytes as they arrived.
    expect(chunked).toMatchObject({ status: 413, early: true, body: { err: { name: 'PayloadTooLargeError' } } });
    expect((await list(vasp, '&per_page=1')).body.pagination.total).toBe(before);
    expect(readdirSync(smallSpool)).toEqual([]);
  });

  it('refuses a file whose first line is not exactly the header (400), registering nothing', async () => {
    for (const content of [
      'address,asset,customerRef\nETH,0x1,x\n',
      'asset,address\n',
      'asset,address,customerRef,extra\n',
      '',
      'ETH,0xabc,x\n',
    ]) {
      const r = await postFile(await uploadUrl(group.subB, { base: small.url }), content);
      expect(r.status).toBe(400);
      expect(r.body.err).toMatchObject({
        name: 'ValidationError',
        code: 400,
        message: expect.stringMatching(/^file: .*asset,address,customerRef/),
      });
    }
    // A byte-order mark and CRLF line ends are fine.
    const ok = await postFile(
      await uploadUrl(group.subB, { base: small.url }),
      '\uFEFFasset,address,customerRef\r\nETH,0x1313131313131313131313131313131313131313,bom\r\n',
    );
    expect(ok.status).toBe(200);
    expect((await finished(uploadIdOf(ok.body), small.url)).counts).toMatchObject({
      rowsRead: 1,
      registered: 1,
      rejected: 0,
    });
    const missingPart = await postFile(await uploadUrl(group.subB, { base: small.url }), csv([]), {
      field: 'document',
    });
    expect(missingPart.status).toBe(400);
    expect(missingPart.body.err!.message).toMatch(/^file: /);
  });

  it('refuses an expired upload URL and a forged one (401), registering nothing', async () => {
    const vasp = group.subB;
    const before = (await list(vasp, '&per_page=1')).body.pagination.total;
    const content = csv([`ETH,${evm(1, 'e1')},late`]);
    const expired = await uploadUrl(vasp, { base: shortLived.url }); // valid for 1 s there
    await new Promise((r) => setTimeout(r, 2100));
    const late = await postFile(expired, content);
    expect(late).toEqual({
      status: 401,
      body: {
        err: {
          name: 'UnauthorizedError',
          code: 401,
          message: 'upload URL expired: request a new one',
          stack: 'UnauthorizedError: upload URL expired: request a new one',
        },
      },
    });

    const genuine = new URL(await uploadUrl(vasp));
    const [h, p] = genuine.searchParams.get('token')!.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forgedKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new Uint8Array(32));
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, vaspDID: group.subA })).toString('base64url')}.${genuine.searchParams.get('token')!.split('.')[2]}`;
    const accessToken = await token();
    for (const t of [forgedKey, tampered, accessToken]) {
      const r = await postFile(`${sb.url}/upload?token=${t}`, content);
      expect(r).toEqual({
        status: 401,
        body: {
          err: {
            name: 'UnauthorizedError',
            code: 401,
            message: 'invalid upload token',
            stack: 'UnauthorizedError: invalid upload token',
          },
        },
      });
    }
    expect((await postFile(`${sb.url}/upload`, content)).status).toBe(401);
    expect((await list(vasp, '&per_page=1')).body.pagination.total).toBe(before);
    expect((await list(group.subA, '&per_page=1')).body.data.map((d) => d.customer_ref)).not.toContain('late');
  });

  it('counts uploads per VASP in metadata.extra.counter', async () => {
    const vasp = group.subB;
    const a = await postFile(await uploadUrl(vasp), csv([]));
    const b = await postFile(await uploadUrl(vasp), csv([]));
    expect(b.body.uploadedFile.metadata.extra.counter).toBe(a.body.uploadedFile.metadata.extra.counter + 1);
    const own = await postFile(await uploadUrl(group.external, { as: group.externalUser }), csv([]));
    expect(own.body.uploadedFile.metadata.extra).toEqual({ vaspDID: group.external, counter: 2 });
    expect((await finished(uploadIdOf(b.body))).counts).toEqual({
      rowsRead: 0,
      registered: 0,
      updated: 0,
      rejected: 0,
    });
  });
  it("checks the uploader's permission again when the file arrives", async () => {
    const url = await uploadUrl(group.subB, { as: uploader });
    await sb.pool.query('update user_roles set permissions = $2 where user_did = $1', [
      uploader.did,
      ['auth.customerToken'],
    ]);
    try {
      const r = await postFile(url, csv([`ETH,${evm(1, 'c1')},revoked`]));
      expect(r).toMatchObject({ status: 403, body: { err: { name: 'UserDIDNotAdminforVASPError', code: 403 } } });
    } finally {
      await sb.pool.query('update user_roles set permissions = $2 where user_did = $1', [
        uploader.did,
        ['address.uploadAddressList'],
      ]);
    }
    // Read-only access to the book is not needed to upload to it, and uploading does not grant it.
    expect((await postFile(await uploadUrl(group.subB, { as: uploader }), csv([]))).status).toBe(200);
  });

  it("shows an upload's status and the outbox; unknown uploads are 404", async () => {
    expect(
      (await fetch(`${sb.url}/sandbox/uploads/00000000-0000-4000-8000-000000000000`, { headers: sb.testHeaders() }))
        .status,
    ).toBe(404);
    expect((await fetch(`${sb.url}/sandbox/uploads/not-a-uuid`, { headers: sb.testHeaders() })).status).toBe(404);
    const r = await postFile(await uploadUrl(group.subB, { as: uploader }), csv(['ETH,,x', `ETH,${evm(2, 'c2')},ok`]), {
      name: 'status.csv',
    });
    const id = uploadIdOf(r.body);
    const done = await finished(id);
    expect(done).toEqual({
      id,
      vaspDID: group.subB,
      userDID: uploader.did,
      fileName: 'status.csv',
      sizeBytes: expect.any(Number),
      counter: r.body.uploadedFile.metadata.extra.counter,
      status: 'completed',
      counts: { rowsRead: 2, registered: 1, updated: 0, rejected: 1 },
      rejectedRows: [{ line: 2, asset: 'ETH', address: '', customerRef: 'x', reason: 'empty address' }],
      rejectedRowsTruncated: false,
      error: null,
      receivedAt: expect.any(String),
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    const outbox = (await (
      await fetch(`${sb.url}/sandbox/outbox?to=uploader@gateway.example`, { headers: sb.testHeaders() })
    ).json()) as { emails: Email[] };
    const mail = outbox.emails.find((e) => e.data.uploadId === id)!;
    expect(mail).toMatchObject({
      to: 'uploader@gateway.example',
      subject: 'Address list status.csv processed: 1 addresses registered, 1 rows rejected',
    });
    expect(mail.data).toMatchObject({
      uploadId: id,
      counts: done.counts,
      rejectedRows: done.rejectedRows,
      rejectedRowsTruncated: false,
    });
    // A second upload of the same file finds its rows already registered.
    const again = await postFile(
      await uploadUrl(group.subB, { as: uploader }),
      csv(['ETH,,x', `ETH,${evm(2, 'c2')},ok`]),
    );
    expect((await finished(uploadIdOf(again.body))).counts).toEqual({
      rowsRead: 2,
      registered: 0,
      updated: 1,
      rejected: 1,
    });
  });

  it('spools uploads in a directory only this user can read: its own temporary one, or the configured one narrowed to 0700', async () => {
    const r = await postFile(await uploadUrl(group.gateway), csv([`ETH,${evm(1, 'e1')},spool`]));
    expect(r.status).toBe(200);
    const id = uploadIdOf(r.body);
    await finished(id);
    const {
      rows: [row],
    } = await sb.pool.query<{ spool_path: string }>('select spool_path from address_uploads where id = $1', [id]);
    const dir = dirname(row!.spool_path);
    expect(dir.startsWith(join(tmpdir(), 'travel-rule-sandbox-uploads-'))).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);

    // A configured directory that exists open to everyone is made private at start.
    const configured = join(mkdtempSync(join(tmpdir(), 'spool-parent-')), 'uploads');
    mkdirSync(configured);
    chmodSync(configured, 0o777);
    const other = await startSandboxWith(group.seed, { spoolDir: configured });
    try {
      expect(statSync(configured).mode & 0o777).toBe(0o700);
    } finally {
      await other.close();
    }
  });

  it('gives two uploads racing on one URL files of their own: the first is processed whole, the second gets 409 (issue 15, item 4)', async () => {
    const url = await uploadUrl(group.gateway);
    const rowsOf = (salt: string, n: number) => Array.from({ length: n }, (_, i) => `ETH,${evm(i, salt)},race-${salt}`);
    const first = csv(rowsOf('f1', 20_000));
    const second = csv(rowsOf('f2', 30_000));
    // The second request starts first and sends half of its file, then waits until the first has been answered.
    const boundary = `----race${randomUUID()}`;
    const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="second.csv"\r\ncontent-type: text/csv\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const half = Math.floor(second.length / 2);
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(head + second.slice(0, half)));
        await released;
        controller.enqueue(new TextEncoder().encode(second.slice(half) + tail));
        controller.close();
      },
    });
    const slow = fetch(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    await new Promise((r) => setTimeout(r, 500));
    const fast = await postFile(url, first, { name: 'first.csv' });
    release();
    const late = await slow;
    expect(fast.status).toBe(200);
    expect(late.status).toBe(409);
    expect(((await late.json()) as { err: { name: string } }).err.name).toBe('UploadURLUsedError');
    // The first file is processed exactly as it was sent: nothing of the second one written into it or removed under it.
    const done = await finished(uploadIdOf(fast.body));
    expect(done).toMatchObject({
      status: 'completed',
      fileName: 'first.csv',
      counts: { rowsRead: 20_000, registered: 20_000, rejected: 0 },
    });
    const {
      rows: [row],
    } = await sb.pool.query<{ spool_path: string }>('select spool_path from address_uploads where id = $1', [
      uploadIdOf(fast.body),
    ]);
    // The processor removes the file just after it records the upload as finished.
    const left = () => readdirSync(dirname(row!.spool_path)).filter((f) => f.startsWith(uploadIdOf(fast.body)));
    await eventually(async () => (left().length === 0 ? true : undefined), 10_000, 100).catch(() => undefined);
    expect(left()).toEqual([]);
  });

  it('resumes an upload whose sandbox stopped while processing it, when a sandbox starts again', async () => {
    const id = randomUUID();
    const spool = join(smallSpool, `${id}.csv`);
    writeFileSync(spool, csv([`ETH,${evm(1, 'd1')},resumed`, `ETH,${evm(2, 'd1')},resumed`]));
    await sb.pool.query(
      `insert into address_uploads (id, vasp_did, user_did, counter, file_name, size_bytes, spool_path, status, claimed_by, heartbeat_at, rows_read)
       values ($1, $2, $3, 999, 'crashed.csv', 100, $4, 'processing', $5, now() - interval '10 minutes', 1)`,
      [id, group.subB, uploader.did, spool, randomUUID()],
    );
    const restarted = await startSandboxWith(group.seed, {});
    others.push(restarted);
    try {
      const done = await finished(id, restarted.url);
      expect(done).toMatchObject({ status: 'completed', counts: { rowsRead: 2, registered: 2, rejected: 0 } });
      expect(existsSync(spool)).toBe(false);
      await summaryEmail('uploader@gateway.example', id, restarted.url);
    } finally {
      await restarted.close();
    }
  });
  it('a running sandbox takes over an upload whose owner stopped after this sandbox had started', async () => {
    // A sandbox killed and restarted within the abandonment time finds the claim still fresh at its start.
    const watcher = await startSandboxWith(group.seed, { abandonAfterSeconds: 2, spoolDir: smallSpool });
    others.push(watcher);
    try {
      const id = randomUUID();
      const deadOwner = randomUUID();
      const spool = join(smallSpool, `${id}.csv`);
      writeFileSync(spool, csv([`ETH,${evm(3, 'd1')},taken-over`, `ETH,${evm(4, 'd1')},taken-over`]));
      await sb.pool.query(
        `insert into address_uploads (id, vasp_did, user_did, counter, file_name, size_bytes, spool_path, status, claimed_by, heartbeat_at, rows_read)
         values ($1, $2, $3, 998, 'killed.csv', 100, $4, 'processing', $5, now(), 1)`,
        [id, group.subB, uploader.did, spool, deadOwner],
      );
      const done = await finished(id, watcher.url);
      expect(done).toMatchObject({ status: 'completed', counts: { rowsRead: 2, registered: 2, rejected: 0 } });
      const { rows } = await sb.pool.query<{ claimed_by: string }>(
        'select claimed_by from address_uploads where id = $1',
        [id],
      );
      expect(rows[0]!.claimed_by).not.toBe(deadOwner);
    } finally {
      await watcher.close();
    }
  });
  it('findOwners: exact entries first, the master address for an unregistered tag, entries without an asset for any asset', async () => {
    const master = `rFIND${randomSecret().replace(/[^A-Za-z0-9]/g, '')}`;
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subA, asset: 'XRP', address: master, customerRef: 'master' },
    });
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subB, asset: 'XRP', address: `${master}:42`, customerRef: 'tagged' },
    });
    await call('POST', '/address/registerCustomer', {
      body: { vaspDID: group.subB, address: `${master}:43`, customerRef: 'any asset' },
    });

    const tagged = await findOwners(sb.pool, 'xrp', `${master}:42`);
    expect(tagged.map((o) => [o.vaspDid, o.match, o.customerRef, o.parentDid])).toEqual([
      [group.subB, 'exact', 'tagged', group.gateway],
    ]);
    const viaMaster = await findOwners(sb.pool, 'XRP', `${master}:99`);
    expect(viaMaster.map((o) => [o.vaspDid, o.match, o.address])).toEqual([[group.subA, 'master', master]]);
    expect((await findOwners(sb.pool, 'XLM', `${master}:43`)).map((o) => [o.vaspDid, o.asset])).toEqual([
      [group.subB, ''],
    ]);
    expect(await findOwners(sb.pool, 'XLM', `${master}:42`)).toEqual([]);
    expect((await findOwners(sb.pool, '', `${master}:42`)).map((o) => o.vaspDid)).toEqual([group.subB]);
    expect(await findOwners(sb.pool, 'XRP', 'no such address')).toEqual([]);
  });
});
