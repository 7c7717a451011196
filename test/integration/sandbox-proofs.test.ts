/**
 * Issue 22, item 4: the sandbox takes ownership proofs (`originatorProof`, `beneficiaryProof`) on tx/create and
 * tx/update in the network's OwnershipProof shape, returns them on tx/info, tx/list and the webhook's transaction, and
 * refuses a proof it cannot parse with 400 naming the field, storing nothing. Every answer of a route the network's
 * OpenAPI describes is checked against it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { NetworkOpenApi } from '../harness/network-openapi';
import { eventually, groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

// Answers are read field by field.
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const spec = NetworkOpenApi.load();
const address = () => `0x${randomBytes(20).toString('hex')}`;

/** One proof of each type the network names, with the fields that type needs (and some optional ones). */
const PROOFS: Record<string, Json> = {
  'eip-191': {
    type: 'eip-191',
    proof: `0x${'ab'.repeat(65)}`,
    attestation: 'I certify that ETH account 0x896B…0b9b belongs to me.',
    address: address(),
    wallet_provider: 'Metamask',
  },
  'eip-712': { type: 'eip-712', proof: `0x${'cd'.repeat(65)}`, address: address() },
  'bip-137': {
    type: 'bip-137',
    proof: Buffer.alloc(65, 7).toString('base64'),
    attestation: 'I certify that BTC account 1A1zP1… belongs to me.',
    address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa',
  },
  'bip-322': {
    type: 'bip-322',
    proof: Buffer.alloc(107, 3).toString('base64'),
    address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  },
  microtransfer: { type: 'microtransfer', proof: `0x${randomBytes(32).toString('hex')}`, address: address() },
  screenshot: { type: 'screenshot', url: 'https://uploads.example/wallet.png', wallet_provider: 'Ledger Live' },
  'self-declaration': {
    type: 'self-declaration',
    attestation: 'I hereby declare that the blockchain address is under my control.',
    confirmed: true,
  },
};

describe('sandbox: ownership proofs on transactions (issue 22, item 4)', () => {
  const group = groupSeed();
  let sb: RunningSandbox;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  async function call(
    method: string,
    path: string,
    body?: unknown,
    who: { clientId: string; clientSecret: string } = group.gatewayUser,
  ): Promise<{ status: number; body: Json }> {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await sb.token(who)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    const json = JSON.parse(text) as Json;
    const specPath = path.split('?')[0]!;
    if (!spec.operations().some((op) => op.method === method && op.path === specPath))
      return { status: r.status, body: json };
    const checked = spec.checkResponse(method, specPath, r.status, json);
    if (checked.undocumented) throw new Error(`${method} ${path}: ${r.status} is not documented by the network`);
    if (checked.errors.length)
      throw new Error(`${method} ${path} ${r.status}: ${checked.errors.join('; ')}\n${text.slice(0, 800)}`);
    return { status: r.status, body: json };
  }

  const createBody = (over: Record<string, unknown> = {}) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { origin: address(), destination: address() },
    ...over,
  });
  const count = async () =>
    (await call('GET', `/tx/list?vaspDID=${group.subA}&resultsPerPage=1`)).body.paginateInfo.totalItems as number;

  it.each(Object.keys(PROOFS))(
    'a %s proof is stored and answered in the network shape on create, info and list',
    async (type) => {
      const proof = PROOFS[type];
      const body = createBody({ originatorProof: proof, beneficiaryProof: proof, transactionRef: `proof-${type}` });
      // The network's request schema takes it too (OwnershipProof is an open object).
      expect(spec.checkRequest('POST', '/tx/create', body)).toEqual([]);
      const created = await call('POST', '/tx/create', body);
      expect(created.status).toBe(200);
      expect(created.body.originatorProof).toEqual(proof);
      expect(created.body.beneficiaryProof).toEqual(proof);
      const info = await call('GET', `/tx/info?id=${created.body.id}`);
      expect(info.body.originatorProof).toEqual(proof);
      expect(info.body.beneficiaryProof).toEqual(proof);
      const list = await call('GET', `/tx/list?vaspDID=${group.subA}&transactionRef=proof-${type}`);
      expect(list.body.transactions).toHaveLength(1);
      expect(list.body.transactions[0].beneficiaryProof).toEqual(proof);
      // The beneficiary reads it as well.
      const theirs = await call('GET', `/tx/info?id=${created.body.id}`, undefined, group.externalUser);
      expect(theirs.body.beneficiaryProof).toEqual(proof);
    },
  );

  it("the OpenAPI's bare {type, proof} and the SDK-shaped request without proofs still work", async () => {
    const bare = { type: 'eip-191', proof: '0xsigned' };
    const withBare = await call('POST', '/tx/create', createBody({ beneficiaryProof: bare }));
    expect(withBare.status).toBe(200);
    expect(withBare.body.beneficiaryProof).toEqual(bare);
    const without = await call('POST', '/tx/create', createBody());
    expect(without.status).toBe(200);
    expect(without.body).not.toHaveProperty('originatorProof');
    expect(without.body).not.toHaveProperty('beneficiaryProof');
    // null is absent, as for the network's other optional fields.
    const nulls = await call('POST', '/tx/create', createBody({ originatorProof: null, beneficiaryProof: null }));
    expect(nulls.status).toBe(200);
    expect(nulls.body).not.toHaveProperty('beneficiaryProof');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['not an object', { beneficiaryProof: 'eip-191:0xsig' }, 'beneficiaryProof: '],
    ['an array', { originatorProof: [PROOFS['eip-191']] }, 'originatorProof: '],
    ['no type', { beneficiaryProof: { proof: '0xsig' } }, 'beneficiaryProof.type: '],
    ['an unknown type', { beneficiaryProof: { type: 'eip-999', proof: '0xsig' } }, 'beneficiaryProof.type: '],
    ['a type of another spelling', { beneficiaryProof: { type: 'EIP191', proof: '0xsig' } }, 'beneficiaryProof.type: '],
    [
      'a signature without proof',
      { beneficiaryProof: { type: 'bip-322', address: 'bc1q' } },
      'beneficiaryProof.proof: ',
    ],
    ['an empty proof', { originatorProof: { type: 'eip-712', proof: '  ' } }, 'originatorProof.proof: '],
    ['a proof of the wrong type', { beneficiaryProof: { type: 'eip-191', proof: 42 } }, 'beneficiaryProof.proof: '],
    [
      'a small deposit without its transaction hash',
      { beneficiaryProof: { type: 'microtransfer', address: '0xabc' } },
      'beneficiaryProof.proof: ',
    ],
    ['a screenshot without url', { beneficiaryProof: { type: 'screenshot' } }, 'beneficiaryProof.url: '],
    [
      'a screenshot url that is not http(s)',
      { beneficiaryProof: { type: 'screenshot', url: 'file:///etc/passwd' } },
      'beneficiaryProof.url: ',
    ],
    [
      'a self-declaration without confirmed',
      { originatorProof: { type: 'self-declaration', attestation: 'mine' } },
      'originatorProof.confirmed: ',
    ],
    [
      'confirmed as text',
      { originatorProof: { type: 'self-declaration', attestation: 'mine', confirmed: 'yes' } },
      'originatorProof.confirmed: ',
    ],
    [
      'an unknown field',
      { beneficiaryProof: { type: 'eip-191', proof: '0xsig', walletProvider: 'Metamask' } },
      'beneficiaryProof.walletProvider: ',
    ],
    [
      'an address that is not text',
      { beneficiaryProof: { type: 'eip-191', proof: '0xsig', address: { eth: '0x' } } },
      'beneficiaryProof.address: ',
    ],
    [
      'a proof longer than 16 KiB',
      { beneficiaryProof: { type: 'bip-322', proof: 'A'.repeat(16 * 1024 + 1) } },
      'beneficiaryProof.proof: ',
    ],
  ])('tx/create with %s: 400 naming the field, nothing stored', async (_, over, field) => {
    const before = await count();
    const ref = `bad-${randomBytes(6).toString('hex')}`;
    const r = await call('POST', '/tx/create', createBody({ ...over, transactionRef: ref }));
    expect(r.status).toBe(400);
    expect(r.body.err.name).toBe('NotabeneTransactionValidationError');
    expect(r.body.err.message.startsWith(field)).toBe(true);
    expect(await count()).toBe(before);
    expect((await call('GET', `/tx/list?vaspDID=${group.subA}&transactionRef=${ref}`)).body.transactions).toEqual([]);
  });

  it('tx/update sets a proof (the beneficiary its own), refuses a bad one and keeps the stored one', async () => {
    const created = await call('POST', '/tx/create', createBody());
    const id = created.body.id as string;
    const own = PROOFS['self-declaration'];
    const updated = await call('POST', '/tx/update', { id, originatorProof: own });
    expect(updated.status).toBe(200);
    expect(updated.body.originatorProof).toEqual(own);
    const theirs = PROOFS.screenshot;
    const byBeneficiary = await call('POST', '/tx/update', { id, beneficiaryProof: theirs }, group.externalUser);
    expect(byBeneficiary.status).toBe(200);
    expect(byBeneficiary.body.beneficiaryProof).toEqual(theirs);

    const bad = await call('POST', '/tx/update', {
      id,
      originatorRef: 'changed',
      beneficiaryProof: { type: 'screenshot', url: 42 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.err.message).toMatch(/^beneficiaryProof\.url: /);
    const info = (await call('GET', `/tx/info?id=${id}`)).body;
    expect(info.beneficiaryProof).toEqual(theirs);
    expect(info.originatorProof).toEqual(own);
    expect(info.originatorRef).toBeUndefined();
  });

  it('the pre-flight validations parse proofs as tx/create does', async () => {
    const full = {
      transactionAsset: 'ETH',
      transactionAmount: '1000',
      originatorVASPdid: group.subA,
      transactionBlockchainInfo: { destination: address() },
    };
    const ok = await call('POST', '/tx/validate/full', { ...full, beneficiaryProof: PROOFS['bip-322'] });
    expect(ok.status).toBe(200);
    expect(ok.body.beneficiaryAddressType).toBe('UNHOSTED');
    const bad = await call('POST', '/tx/validate/full', { ...full, beneficiaryProof: { type: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.body.err.message).toMatch(/^beneficiaryProof\.type: /);
  });

  it("the webhook's transaction carries the proofs", async () => {
    const received: Json[] = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      expect((await call('POST', '/webhook', { vaspDID: group.external, url }, group.externalUser)).status).toBe(200);
      const proof = PROOFS['eip-191'];
      const tx = await call('POST', '/tx/create', createBody({ beneficiaryProof: proof }));
      const delivered = await eventually(
        async () => received.find((b) => b.payload?.transaction?.id === tx.body.id),
        15_000,
      );
      expect(delivered.payload.transaction.beneficiaryProof).toEqual(proof);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
