import { createServer, type AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { createPool } from '../../db/pool';
import { buildSandbox } from '../../sandbox/server';
import { applySeed, type Seed } from '../../sandbox/seed';
import type { AddressBookOptions } from '../../sandbox/address-book';
import { eventually, groupSeed, quietLogger, randomDid, randomSecret, startSandbox, testEnv, type RunningSandbox } from '../harness/platform';

/** Like the harness's startSandbox, with address-book settings of the test's choosing (small limits, short URLs). */
async function startSandboxWith(seed: Seed, addressBook: Partial<AddressBookOptions>): Promise<RunningSandbox> {
  const pool = createPool(testEnv().databaseUrl, 'sandbox');
  await applySeed(pool, seed);
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const url = `http://127.0.0.1:${port}`;
  const app = await buildSandbox({
    pool, logger: quietLogger(), config: { host: '127.0.0.1', port, publicUrl: url, piiUrl: `${url}/pii`, addressBook },
  });
  await app.listen({ host: '127.0.0.1', port });
  return {
    url, app, pool,
    networkConfig: () => { throw new Error('not needed here'); },
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

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
  data: { kind: string; uploadId: string; status: string; counts: UploadView['counts']; rejectedRows: UploadView['rejectedRows'] };
}

interface Listing {
  pagination: { page: number; per_page: number; total: number };
  metadata: { source: string };
  data: { address: string; owner_vasp_did: string; customer_did: string | null; customer_ref: string }[];
}

const HEADER = 'asset,address,customerRef';
const csv = (rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
const evm = (i: number, salt: string) => `0x${salt}${i.toString(16).padStart(40 - salt.length, '0')}`;

describe('sandbox: address book', () => {
  const group = groupSeed();
  // A user who may act for subsidiary A but holds no address-book permission on it.
  const viewerOnly = { did: randomDid(), clientId: `vo-${randomSecret()}`, clientSecret: randomSecret() };
  group.seed.users.push({
    did: viewerOnly.did, name: 'Read Only', email: 'readonly@gateway.example',
    roles: [{ vaspDID: group.subA, permissions: ['auth.customerToken'] }],
    credentials: [{ clientId: viewerOnly.clientId, clientSecret: viewerOnly.clientSecret }],
  });
  let sb: RunningSandbox;
  let small: RunningSandbox;
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    small = await startSandboxWith(group.seed, { maxUploadBytes: 64 * 1024, uploadUrlTtlSeconds: 1 });
  });
  afterAll(async () => {
    await sb?.close();
    await small?.close();
  });

  const token = async (c: { clientId: string; clientSecret: string } = group.gatewayUser, base = sb.url) => {
    const key = `${base}|${c.clientId}`;
    if (!tokens.has(key)) {
      const r = await fetch(`${base}/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: c.clientId, client_secret: c.clientSecret, grant_type: 'client_credentials', audience: base }),
      });
      tokens.set(key, ((await r.json()) as { access_token: string }).access_token);
    }
    return tokens.get(key)!;
  };

  const call = async <T = Record<string, unknown>>(
    method: string, path: string, opts: { body?: unknown; as?: { clientId: string; clientSecret: string }; base?: string } = {},
  ) => {
    const base = opts.base ?? sb.url;
    const headers: Record<string, string> = { authorization: `Bearer ${await token(opts.as, base)}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
  };

  const uploadUrl = async (vasp: string, opts: { as?: { clientId: string; clientSecret: string }; base?: string } = {}) => {
    const r = await call<{ uploadUrl: string }>('GET', `/address/upload/${vasp}`, opts);
    expect(r.status).toBe(200);
    return r.body.uploadUrl;
  };

  const postFile = async (url: string, content: string | Uint8Array, opts: { name?: string; field?: string } = {}) => {
    const form = new FormData();
    form.append(opts.field ?? 'file', new Blob([content], { type: 'text/csv' }), opts.name ?? 'addresses.csv');
    const r = await fetch(url, { method: 'POST', body: form });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as UploadResponse & { err?: { name: string; code: number; message: string } } };
  };

  const uploadIdOf = (r: UploadResponse) => r.uploadedFile.locationURL.split('/').pop()!;

  const status = async (id: string, base = sb.url) => (await (await fetch(`${base}/sandbox/uploads/${id}`)).json()) as UploadView;

  const finished = (id: string, base = sb.url) =>
    eventually(async () => {
      const s = await status(id, base);
      return s.status === 'completed' || s.status === 'failed' ? s : undefined;
    }, 60_000);

  const summaryEmail = async (to: string, uploadId: string, base = sb.url) =>
    eventually(async () => {
      const r = (await (await fetch(`${base}/sandbox/outbox?to=${encodeURIComponent(to)}`)).json()) as { emails: Email[] };
      return r.emails.find((e) => e.data.uploadId === uploadId);
    });

  const list = (vasp: string, query = '', as?: { clientId: string; clientSecret: string }) =>
    call<Listing>('GET', `/v1/addresses?vasp_did=${vasp}&source=ADDRESS_GRAPH${query}`, { as });

  it('issues an upload URL on the sandbox carrying its own short-lived credential, and accepts a CSV there', async () => {
    const url = await uploadUrl(group.gateway);
    expect(url.startsWith(`${sb.url}/upload?token=`)).toBe(true);
    const claims = JSON.parse(Buffer.from(new URL(url).searchParams.get('token')!.split('.')[1]!, 'base64url').toString()) as Record<string, number | string>;
    expect(claims).toMatchObject({ sub: group.gatewayUser.did, vaspDID: group.gateway });
    expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(600);

    const r = await postFile(url, csv(['ETH,0x1111111111111111111111111111111111111111,Alice@SG1']), { name: 'book.csv' });
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
    expect(done).toMatchObject({ status: 'completed', counts: { rowsRead: 1, registered: 1, updated: 0, rejected: 0 }, fileName: 'book.csv' });
  });
});
