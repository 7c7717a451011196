/**
 * Issue 25, fidelity: every route of the network's public v1 OpenAPI that the sandbox serves answers, for each status
 * the spec documents and the sandbox produces, a body that validates against the spec's own schema for that path,
 * method and status (test/harness/network-openapi.ts: ajv over the spec, `$ref`s resolved inside it, with the few
 * documented exceptions where interface.md wins). The spec's request examples go through as they stand. The last test
 * lists the sandbox's registered routes that the spec documents and fails on any this file did not exercise, or any
 * documented status of them it did not see, so a new route or a drifting answer fails here.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDidKeyRecord } from '../../lib/crypto';
import { fastifyPath, NetworkOpenApi } from '../harness/network-openapi';
import { groupSeed, randomDid, randomSecret, startSandbox, type RunningSandbox } from '../harness/platform';

// Answers are read field by field.
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
type Credentials = { clientId: string; clientSecret: string };

const spec = NetworkOpenApi.load();
const DID_VALUE = /^did:[a-zA-Z0-9]*:.+$/;

/** The VASP DIDs the spec's request examples name (`…VASPdid`, `vaspDID`): seeded, so the examples go through unchanged. */
function exampleVaspDids(): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== 'object' || v === null) return;
    for (const [k, c] of Object.entries(v)) {
      if (/vaspdid$/i.test(k) && typeof c === 'string' && DID_VALUE.test(c)) found.add(c);
      else walk(c);
    }
  };
  for (const op of spec.operations()) for (const e of spec.requestExamples(op.method, op.path)) walk(e.value);
  return [...found];
}

describe("sandbox fidelity: the documented routes answer in the network's v1 OpenAPI shapes (issue 25)", () => {
  const group = groupSeed();
  const all = [
    'manage',
    'address.uploadAddressList',
    'address.registerCustomer',
    'auth.customerToken',
    'trustframework.updateVASP',
  ];
  const exampleDids = exampleVaspDids();
  const exampleUser = { did: randomDid(), clientId: `example-${randomSecret()}`, clientSecret: randomSecret() };
  for (const did of exampleDids)
    if (!group.seed.vasps.some((v) => v.did === did)) group.seed.vasps.push({ did, name: `Example ${did.slice(-12)}` });
  group.seed.users.push({
    did: exampleUser.did,
    name: 'Example Operator',
    email: 'ops@example.example',
    roles: exampleDids.map((vaspDID) => ({ vaspDID, permissions: all })),
    credentials: [{ clientId: exampleUser.clientId, clientSecret: exampleUser.clientSecret }],
  });

  let sb: RunningSandbox;
  /** A receiver for the webhooks the tests register: on this machine, answering 200. */
  let hooks: Server;
  let hookUrl: string;
  /** `GET /tx/info` → the statuses seen. */
  const exercised = new Map<string, Set<number>>();

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    hooks = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ owns: false })),
      );
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sb?.close();
    await new Promise<void>((r) => (hooks ? hooks.close(() => r()) : r()));
  });

  interface Send {
    params?: Record<string, string>;
    query?: Record<string, string | string[]>;
    body?: unknown;
    /** Whose token (default the gateway's user); null: no Authorization header. */
    as?: Credentials | null;
    /** The request is wrong on purpose (a 400 case): not checked against the request schema. */
    invalid?: boolean;
  }

  /**
   * Sends `op` ("POST /tx/create", the spec's path) and requires `status`, a status the spec documents for it, and a
   * body that validates against the spec's schema for that status. Records the route and status as exercised.
   */
  async function send(op: string, status: number, opts: Send = {}): Promise<Json> {
    const [method, path] = op.split(' ') as [string, string];
    if (opts.body !== undefined && !opts.invalid) {
      const problems = spec.checkRequest(method, path, opts.body);
      if (problems.length)
        throw new Error(`${op}: this test's own request does not follow the spec:\n  ${problems.join('\n  ')}`);
    }
    const url = new URL(
      sb.url +
        path.replace(/\{([^}]+)\}/g, (_, name: string) => {
          const value = opts.params?.[name];
          if (value === undefined) throw new Error(`${op}: no value for {${name}}`);
          return encodeURIComponent(value);
        }),
    );
    for (const [k, v] of Object.entries(opts.query ?? {}))
      for (const one of [v].flat()) url.searchParams.append(k, one);
    const headers: Record<string, string> = {};
    if (opts.as !== null) headers.authorization = `Bearer ${await sb.token(opts.as ?? group.gatewayUser)}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(url, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await r.text();
    if (r.status !== status)
      throw new Error(`${op}: expected ${status}, the sandbox answered ${r.status}: ${text.slice(0, 600)}`);
    let body: Json;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      throw new Error(`${op} ${status}: the body is not JSON: ${text.slice(0, 200)}`);
    }
    const checked = spec.checkResponse(method, path, status, body);
    if (checked.undocumented)
      throw new Error(`${op}: the spec does not document ${status} for this route; test a documented status`);
    if (checked.errors.length) {
      throw new Error(
        `${op} ${status}: the body does not validate against ${checked.schema}:\n  ${checked.errors.join('\n  ')}\nbody: ${text.slice(0, 1500)}`,
      );
    }
    const seen = exercised.get(`${method} ${path}`) ?? new Set<number>();
    seen.add(status);
    exercised.set(`${method} ${path}`, seen);
    return body;
  }

  const destination = () => `0x${randomBytes(20).toString('hex')}`;
  const createBody = (over: Record<string, unknown> = {}) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { origin: destination(), destination: destination() },
    ...over,
  });
  const create = (over: Record<string, unknown> = {}, as: Credentials = group.gatewayUser) =>
    send('POST /tx/create', 200, { body: createBody(over), as });

  it('accepts every request example the spec documents for a route the sandbox serves, as it stands', async () => {
    const served = spec
      .operations()
      .filter((op) => sb.app.hasRoute({ method: op.method as 'GET', url: fastifyPath(op.path) }));
    const examples = served.flatMap((op) => spec.requestExamples(op.method, op.path).map((e) => ({ op, ...e })));
    expect(examples.map((e) => `${e.op.method} ${e.op.path} (${e.name})`)).toContain(
      'POST /tx/create (below-threshold)',
    );
    for (const { op, value } of examples) {
      const answer = await send(`${op.method} ${op.path}`, 200, { body: value, as: exampleUser });
      if (op.path === '/tx/create') {
        // Hosted mode: the owner reads the IVMS101 back, in the spec's ivms101 shape.
        const info = await send('GET /tx/info', 200, { query: { id: answer.id }, as: exampleUser });
        expect(
          info.ivms101?.originator?.originatorPersons?.[0]?.naturalPerson?.name?.[0]?.nameIdentifier?.[0]
            ?.primaryIdentifier,
        ).toBe('Frodo');
        await send('GET /tx/list', 200, { query: { vaspDID: answer.originatorVASPdid }, as: exampleUser });
      }
    }
  });

  it('transactions: create (each asset form, client-side pii), info, update and list answer Transaction shapes; 400 and 401 the error shapes', async () => {
    const sent = await create({
      transactionRef: `ref-${randomSecret()}`,
      originatorRef: 'cust-1',
      beneficiaryRef: 'cust-2',
      protocol: 'TRLight',
      notificationEmail: 'tr@external.example',
      originatorProof: { type: 'eip-191', proof: '0xproof' },
      blockchainTransactionTimestamp: new Date().toISOString(),
    });
    expect(sent.status).toBe('SENT');
    expect(sent.originatorProof).toEqual({ type: 'eip-191', proof: '0xproof' });
    const caip19 = 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
    const byCaip = await create({ transactionAsset: { caip19 }, transactionAssetDecimals: 6 });
    expect(byCaip.transactionAsset).toBe(caip19);
    await create({ transactionAsset: { coingeckoId: 'ethereum', network: 'ethereum' } });
    const pii = {
      originator: {
        originatorPersons: [
          {
            naturalPerson: {
              name: [{ nameIdentifier: [{ primaryIdentifier: 'eyJhbGciOi.enc', nameIdentifierType: 'LEGL' }] }],
            },
          },
        ],
      },
    };
    const withPii = await create({ pii, encrypted: 'opaque' });
    await send('GET /tx/info', 200, { query: { id: withPii.id } });
    await send('GET /tx/info', 200, { query: { id: sent.id }, as: group.externalUser });

    await send('POST /tx/update', 200, {
      body: { id: sent.id, txHash: `0x${randomBytes(32).toString('hex')}`, originatorRef: 'cust-1b' },
    });
    // Ownership proofs (issue 22): the spec's OwnershipProof on update, and a type the sandbox cannot parse refused.
    const proof = { type: 'microtransfer', proof: `0x${randomBytes(32).toString('hex')}` };
    expect(
      (await send('POST /tx/update', 200, { body: { id: sent.id, beneficiaryProof: proof } })).beneficiaryProof,
    ).toEqual(proof);
    await send('POST /tx/update', 400, { body: { id: sent.id, beneficiaryProof: { type: 'unknown', proof: 'x' } } });
    await send('POST /tx/update', 400, { body: { txHash: '0xabc' }, invalid: true });
    await send('POST /tx/update', 401, { body: { id: sent.id, txHash: '0xdef' }, as: null });

    await send('GET /tx/list', 200, { query: { vaspDID: group.subA } });
    await send('GET /tx/list', 200, {
      query: {
        vaspDID: group.external,
        txDirection: 'incoming',
        sort: 'createdAt:ASC',
        page: '0',
        resultsPerPage: '5',
      },
      as: group.externalUser,
    });

    await send('POST /tx/create', 400, { body: createBody({ transactionAmount: undefined }), invalid: true });
    await send('POST /tx/create', 400, { body: createBody({ originatorVASPdid: group.gateway }) });
    const notAdmin = await send('POST /tx/create', 400, { body: createBody({ originatorVASPdid: group.external }) });
    expect(notAdmin.err.name).toBe('UserDIDNotAdminforVASPError');
    await send('POST /tx/create', 401, { body: createBody(), as: null });
  });

  it('transactions: every action answers the Transaction; approve 400 and 401 the error shapes', async () => {
    const pending = await create({ beneficiaryVASPdid: undefined });
    expect(pending.status).toBe('NEW');
    expect((await send('POST /tx/approve', 200, { query: { id: pending.id } })).status).toBe('WAITING_FOR_INFORMATION');
    await send('POST /tx/approve', 400, { query: { id: pending.id } });
    // Neither party, and the beneficiary's side: the spec's UserDIDNotAdminforVASPError, under 400.
    expect((await send('POST /tx/approve', 400, { query: { id: pending.id }, as: group.externalUser })).err.name).toBe(
      'UserDIDNotAdminforVASPError',
    );
    const toExternal = await create();
    expect(
      (await send('POST /tx/approve', 400, { query: { id: toExternal.id }, as: group.externalUser })).err.name,
    ).toBe('UserDIDNotAdminforVASPError');
    await send('POST /tx/approve', 401, { query: { id: pending.id }, as: null });
    expect((await send('POST /tx/cancel', 200, { body: { id: pending.id, reason: 'fidelity test' } })).status).toBe(
      'CANCELLED',
    );

    const ext = group.externalUser;
    const accepted = await create();
    expect((await send('POST /tx/confirm', 200, { query: { id: accepted.id }, as: ext })).status).toBe('ACK');
    expect((await send('POST /tx/accept', 200, { query: { id: accepted.id }, as: ext })).status).toBe('ACCEPTED');
    const declined = await create();
    expect((await send('POST /tx/notReady', 200, { body: { id: declined.id, reason: 'later' }, as: ext })).status).toBe(
      'NOT_READY',
    );
    expect((await send('POST /tx/decline', 200, { body: { id: declined.id, reason: 'no' }, as: ext })).status).toBe(
      'DECLINED',
    );
    const rejected = await create();
    expect(
      (await send('POST /tx/reject', 200, { body: { id: rejected.id, reason: 'not ours' }, as: ext })).status,
    ).toBe('REJECTED');
  });

  it('tx/notify (issue 23): a new INCOMPLETE message, its completion and the matching message answer Transaction shapes', async () => {
    const deposit = {
      txHash: `0x${randomBytes(32).toString('hex')}`,
      transactionAmount: '1000000000000000000',
      transactionAsset: 'ETH',
      destination: destination(),
      beneficiaryVASPdid: group.subA,
      origin: destination(),
      customerRef: 'cust-1',
    };
    const incomplete = await send('POST /tx/notify', 200, { body: deposit });
    expect(incomplete).toMatchObject({ status: 'INCOMPLETE', transactionType: 'UNKNOWN' });
    expect(incomplete.originatorVASPdid).toBeUndefined();
    const completed = await create(
      {
        originatorVASPdid: group.external,
        beneficiaryVASPdid: group.subA,
        transactionBlockchainInfo: { txHash: deposit.txHash, origin: deposit.origin, destination: deposit.destination },
      },
      group.externalUser,
    );
    expect(completed.id).toBe(incomplete.id);
    const matched = await send('POST /tx/notify', 200, { body: deposit });
    expect(matched).toMatchObject({ id: incomplete.id, originatorVASPdid: group.external });
  });

  it('nested routing: settings, redirect (200, 400 for each documented error, 401)', async () => {
    const settings = await send('PUT /tf/vasps/{vaspDID}/settings', 200, {
      params: { vaspDID: group.gateway },
      body: { autoredirect: false, statusToProcessBlockchain: 'ACK' },
    });
    expect(settings).toMatchObject({ autoredirect: false, statusToProcessBlockchain: 'ACK' });
    await send('PUT /tf/vasps/{vaspDID}/settings', 200, {
      params: { vaspDID: group.gateway },
      body: { statusToProcessBlockchain: null },
    });
    await send('GET /tf/vasps/{vaspDID}/getSettings', 200, { params: { vaspDID: group.gateway } });
    await send('GET /tf/vasps/{vaspDID}/getSettings', 200, { params: { vaspDID: group.subB } });

    const incoming = await create(
      { originatorVASPdid: group.external, beneficiaryVASPdid: group.gateway },
      group.externalUser,
    );
    expect(incoming.status).toBe('SENT');
    await send('POST /tx/redirect', 401, { query: { id: incoming.id, to: group.subA }, as: null });
    const notSub = await send('POST /tx/redirect', 400, { query: { id: incoming.id, to: group.external } });
    expect(notSub.err.name).toBe('NotabeneTransactionError');
    const redirected = await send('POST /tx/redirect', 200, { query: { id: incoming.id, to: group.subA } });
    expect(redirected.beneficiaryVASPdid).toBe(group.subA);
    const notGateway = await send('POST /tx/redirect', 400, {
      query: { id: incoming.id, to: group.subB },
      as: group.externalUser,
    });
    expect(notGateway.err.name).toBe('UserDIDNotAdminforVASPError');
    const again = await create(
      { originatorVASPdid: group.external, beneficiaryVASPdid: group.gateway },
      group.externalUser,
    );
    await send('POST /tx/cancel', 200, { body: { id: again.id }, as: group.externalUser });
    const invalid = await send('POST /tx/redirect', 400, { query: { id: again.id, to: group.subA } });
    expect(invalid.err.name).toBe('NotabeneTransactionInvalidStatusError');
    await send('PUT /tf/vasps/{vaspDID}/settings', 200, {
      params: { vaspDID: group.gateway },
      body: { autoredirect: true },
    });
  });

  it('directory: profile update, the simple views of one VASP and of the list, with and without a token', async () => {
    const key = createDidKeyRecord(randomBytes(32)).did;
    const info = await send('POST /tf/vasps/update', 200, {
      body: {
        did: group.subB,
        fields: [
          { fieldName: 'pii_didkey', values: [{ value: key }] },
          { fieldName: 'website', values: [{ value: 'https://b.example' }] },
        ],
      },
    });
    expect(info.did).toBe(group.subB);
    const one = await send('GET /tf/simple/vasps/{vaspDID}', 200, {
      params: { vaspDID: group.subB },
      query: { fields: 'name,did,pii_didkey,website,logo' },
      as: null,
    });
    expect(one).toMatchObject({ did: group.subB, pii_didkey: key, website: 'https://b.example' });
    await send('GET /tf/simple/vasps/{vaspDID}', 200, { params: { vaspDID: group.external } });
    await send('GET /tf/simple/vasps', 200, { query: { q: 'Gateway' }, as: null });
    await send('GET /tf/simple/vasps', 200);
  });

  it('counterparty reviews: mark (200, 401), and the directory listed by reviewer and value', async () => {
    const review = await send('POST /tf/vasps/{vaspDID}/review', 200, {
      params: { vaspDID: group.subA },
      body: { reviewedVaspDID: group.external, reviewValue: 'BLOCKED', note: 'fidelity' },
    });
    expect(review).toMatchObject({ vaspDID: group.subA, reviewedVaspDID: group.external, reviewValue: 'BLOCKED' });
    await send('POST /tf/vasps/{vaspDID}/review', 401, {
      params: { vaspDID: group.subA },
      body: { reviewedVaspDID: group.external, reviewValue: 'TRUSTED' },
      as: null,
    });
    const listed = await send('GET /tf/simple/vasps', 200, {
      query: { reviewedByVaspDID: group.subA, reviewValue: 'BLOCKED', listingType: 'all' },
    });
    expect(listed.vasps.map((v: Json) => v.did)).toEqual([group.external]);
    const none = await send('GET /tf/simple/vasps', 200, {
      query: { reviewedByVaspDID: group.subA, reviewValue: 'TRUSTED', listingType: 'all' },
    });
    expect(none.vasps).toEqual([]);
  });

  it('address book: upload URL, register, list, ownership (200 and 404), delete (202)', async () => {
    await send('GET /address/upload/{vaspDID}', 200, { params: { vaspDID: group.subA } });
    const address = destination();
    await send('POST /address/registerCustomer', 200, {
      body: { vaspDID: group.subA, asset: 'ETH', address, customerRef: 'cust-7' },
    });
    await send('POST /address/registerCustomer', 200, {
      body: {
        vaspDID: group.subA,
        asset: { caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
        address: destination(),
        customerRef: 'cust-8',
      },
    });
    // An entry without a customer reference: no customer DID.
    await send('POST /address/registerCustomer', 200, {
      body: { vaspDID: group.subA, asset: 'BTC', address: `bc1q${randomBytes(16).toString('hex')}`, customerRef: '' },
    });
    const list = await send('GET /v1/addresses', 200, {
      query: { vasp_did: group.subA, source: 'ADDRESS_GRAPH', source_type: 'INTERNAL', per_page: '10' },
    });
    expect(list.data.map((a: Json) => a.address)).toContain(address);
    await send('GET /v1/addresses', 200, { query: { vasp_did: group.subA, source: 'ADDRESS_GRAPH' } });
    const owner = await send('GET /v1/addresses/address-ownerships/{address}', 200, {
      params: { address },
      query: { vasp_did: group.subA, asset: 'ETH' },
    });
    expect(owner.owner_vasp_did).toBe(group.subA);
    await send('GET /v1/addresses/address-ownerships/{address}', 404, {
      params: { address: destination() },
      query: { vasp_did: group.subA, asset: 'ETH' },
    });
    await send('DELETE /v1/addresses', 202, { query: { addresses: address, vasp_did: group.subA } });
  });

  it('webhooks, the address-query webhook and customer tokens', async () => {
    await send('POST /webhook', 200, { body: { vaspDID: group.subB, url: `${hookUrl}/notify` } });
    await send('GET /webhook', 200, { query: { vaspDID: group.subB } });
    await send('DELETE /webhook', 200, { body: { vaspDID: group.subB } });
    await send('GET /webhook', 404, { query: { vaspDID: group.subB } });

    const hook = await send('POST /integrations/{vaspDID}/address-query-webhook', 200, {
      params: { vaspDID: group.subB },
      body: { url: `${hookUrl}/owns`, params: '?' },
    });
    expect(typeof hook.secret).toBe('string');
    await send('DELETE /integrations/{vaspDID}/address-query-webhook', 200, { params: { vaspDID: group.subB } });

    const token = await send('POST /auth/customerToken', 200, { body: { vaspDID: group.subA, customerRef: 'cust-1' } });
    expect(token.token_type).toBe('Bearer');
  });

  it('rules engine: set per direction (201, 400, 501), get, delete (200, 400)', async () => {
    const set = await send('POST /rules/set/direction', 201, {
      body: {
        vaspDID: group.subA,
        ruleSet: {
          incoming: [
            { order: 1, actionRule: 'REJECT', ruleCheck: 'VASP', ruleValue: group.external },
            { order: 2, actionRule: 'SEND_TO_INBOX', ruleCheck: 'JURISDICTION', ruleValue: 'US,SG' },
            { order: 3, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' },
          ],
          outgoing: [{ order: 1, actionRule: 'APPROVE', ruleCheck: 'TRANSACTION_AMOUNT', ruleValue: '<1000' }],
        },
      },
    });
    expect(set.map((r: Json) => r.ruleCheck)).toEqual(['VASP', 'JURISDICTION', 'ALL', 'TRANSACTION_AMOUNT']);
    expect(set[0].vasps).toEqual([{ did: group.external, name: expect.any(String) }]);
    const listed = await send('GET /rules/get', 200, { query: { vaspDID: group.subA } });
    expect(listed).toEqual(set);
    const duplicated = await send('POST /rules/set/direction', 400, {
      body: {
        vaspDID: group.subA,
        ruleSet: {
          incoming: [
            { order: 1, actionRule: 'REJECT', ruleCheck: 'VASP', ruleValue: `${group.external},${group.external}` },
          ],
        },
      },
    });
    expect(duplicated.err.message).toMatch(/duplicated VASP dids/);
    await send('POST /rules/set/direction', 501, {
      body: {
        vaspDID: group.subA,
        ruleSet: {
          incoming: [
            { order: 1, actionRule: 'SEND_TO_INBOX', ruleCheck: 'RISK_SCORE', ruleValue: '>70', source: 'provider' },
          ],
        },
      },
    });
    const left = await send('POST /rules/delete', 200, { body: { vaspDID: group.subA, ids: [set[0].id] } });
    expect(left).toHaveLength(3);
    const missing = await send('POST /rules/delete', 400, { body: { vaspDID: group.subA, ids: [set[0].id] } });
    expect(missing.message).toContain(set[0].id);
  });

  it('jurisdictions and validation (issue 21): list, validate (deprecated) and validate/full (200, 400, 401)', async () => {
    const de = await send('GET /jurisdictions', 200, { query: { countryCode: 'DE' }, as: null });
    expect(de[0]).toMatchObject({ countryCode: 'DE', currency: 'EUR' });
    await send('GET /jurisdictions', 200, { query: { countryCode: 'BR', fallbackToFATF: 'true' } });
    await send('GET /jurisdictions', 200);

    const validate = {
      transactionAsset: 'USDC',
      destination: destination(),
      transactionAmount: '5000000000',
      originatorVASPdid: group.subA,
      beneficiaryVASPdid: group.external,
      originatorEqualsBeneficiary: false,
    };
    const result = await send('POST /tx/validate', 200, { body: validate });
    expect(result).toMatchObject({ type: 'TRAVELRULE', isValid: false });
    expect(result.errors).toContain('beneficiaryNameMissing');
    const ghost = await send('POST /tx/validate', 400, {
      body: { ...validate, originatorVASPdid: 'did:ethr:0xnobody' },
    });
    expect(ghost.err.name).toBe('TrustFrameworkVASPNotFoundError');
    await send('POST /tx/validate', 401, { body: validate, as: null });

    const body = {
      transactionAsset: 'USDC',
      transactionAmount: '20000000',
      originatorVASPdid: group.subA,
      beneficiaryVASPdid: group.external,
      transactionBlockchainInfo: { destination: destination() },
      validatePartyFields: 'ALL',
    };
    const full = await send('POST /tx/validate/full', 200, { body });
    expect(full).toMatchObject({ type: 'BELOW_THRESHOLD', beneficiaryAddressType: 'HOSTED' });
    expect(full.errors.length).toBeGreaterThan(0);
    const bad = await send('POST /tx/validate/full', 400, {
      body: { ...body, transactionAmount: '1.5' },
      invalid: true,
    });
    expect(bad.err.name).toBe('NotabeneTransactionValidationError');
    await send('POST /tx/validate/full', 401, { body, as: null });
  });

  it('exercised every documented route the sandbox registers, and every status the spec documents for it', () => {
    const served = spec
      .operations()
      .filter((op) => sb.app.hasRoute({ method: op.method as 'GET', url: fastifyPath(op.path) }));
    // A guard on the enumeration itself: the routes the orchestrator calls are among them.
    expect(served.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining(['POST /tx/create', 'GET /tx/info', 'GET /tf/simple/vasps/{vaspDID}']),
    );
    const missing = served
      .filter((op) => !exercised.has(`${op.method} ${op.path}`))
      .map((op) => `${op.method} ${op.path}`);
    expect(missing).toEqual([]);
    const statuses = served.flatMap((op) =>
      op.statuses
        .filter((s) => !exercised.get(`${op.method} ${op.path}`)?.has(s))
        .map((s) => `${op.method} ${op.path} ${s}`),
    );
    expect(statuses).toEqual([]);
    // And nothing was sent to a documented route the sandbox does not register (send() would have failed on a 404).
    expect([...exercised.keys()].filter((k) => !served.some((op) => `${op.method} ${op.path}` === k))).toEqual([]);
  });
});
