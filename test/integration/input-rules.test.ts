import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FREE_TEXT_RULE } from '../../lib/text';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as Json;

/**
 * Input the orchestrator used to accept and then fail on, or that the network refuses (issue 15, items 5 to 7): every
 * case answers 400 naming the field before anything is stored or started.
 */
describe("input rules: free text, the network's limits, the network's own refusals", () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers('admin', {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const transfer = (over: Json = {}) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000',
    originatorVASPdid: g.subA,
    beneficiaryVASPdid: g.external,
    transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
    originator: fixture.originator,
    beneficiary: fixture.beneficiary,
    ...over,
  });
  const withOriginatorPerson = (change: (person: Json) => void) => {
    const originator = structuredClone(fixture.originator) as Json;
    change(originator.originatorPersons[0].naturalPerson);
    return originator;
  };

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('control characters in free text answer 400 naming the field and the rule, before any workflow or write', async () => {
    const tx = randomUUID();
    const keys = [randomUUID(), randomUUID()];
    const cases: [Promise<{ status: number; body: Json }>, string][] = [
      [call('POST', `/v1/transfers/${tx}/decision`, { decision: 'approve', reason: 'ok\u0000' }), 'reason'],
      [call('POST', `/v1/transfers/${tx}/route`, { subsidiaryDid: g.subA, reason: 'ticket\u0000' }), 'reason'],
      [call('POST', `/v1/vasps/${encodeURIComponent(g.subA)}/keys/rotate`, { reason: 'rotate\u0000now' }), 'reason'],
      [call('GET', '/v1/addresses?vaspDID=%00'), 'vaspDID'],
      [call('GET', '/v1/addresses?customerRef=a%C2%85b'), 'customerRef'],
      [
        call('POST', '/v1/transfers', transfer({ originatorRef: 'ref\u0000' }), { 'idempotency-key': keys[0]! }),
        'originatorRef',
      ],
      [
        call(
          'POST',
          '/v1/transfers',
          transfer({
            originator: withOriginatorPerson((p) => {
              p.geographicAddress[0].townName = 'Hobbi\u0000ton';
            }),
          }),
          { 'idempotency-key': keys[1]! },
        ),
        'originator.originatorPersons[0].naturalPerson.geographicAddress[0].townName',
      ],
    ];
    for (const [answer, field] of cases) {
      const { status, body } = await answer;
      expect([field, status, body.error?.field, body.error?.rule]).toEqual([
        field,
        400,
        expect.stringContaining(field),
        FREE_TEXT_RULE,
      ]);
    }
    const rows = await call('PUT', '/v1/addresses', {
      addresses: [
        { vaspDID: g.subA, asset: 'ETH', address: `0x${randomBytes(20).toString('hex')}`, customerRef: 'c\u0000' },
      ],
    });
    expect(rows).toMatchObject({
      status: 400,
      body: { error: { field: 'addresses[0].customerRef', rule: FREE_TEXT_RULE } },
    });
    expect((await orch.pool.query('select count(*)::int as n from audit_log where subject = $1', [tx])).rows[0].n).toBe(
      0,
    );
    expect(
      (await orch.pool.query('select count(*)::int as n from outgoing_transfers where id = any($1)', [keys])).rows[0].n,
    ).toBe(0);
  });

  it('a transfer the network would refuse answers 400 naming the field, and nothing is stored', async () => {
    const manyNames = withOriginatorPerson((p) => {
      p.name = Array.from({ length: 7 }, () => ({
        nameIdentifier: Array.from({ length: 20 }, () => ({
          primaryIdentifier: 'Baggins',
          nameIdentifierType: 'LEGL',
        })),
      }));
    });
    manyNames.originatorPersons = Array.from({ length: 20 }, () => manyNames.originatorPersons[0]);
    const cases: [Json, string, RegExp][] = [
      [{ transactionAmount: `1${'0'.repeat(80)}` }, 'transactionAmount', /80 characters/],
      [{ transactionAsset: ' ' }, 'transactionAsset', /blank/],
      [{ transactionAsset: 'ETH ' }, 'transactionAsset', /spaces/],
      [{ transactionAsset: { coingeckoId: 'ethereum', network: ' ' } }, 'transactionAsset.network', /blank/],
      [{ beneficiaryVASPname: 'x'.repeat(1025) }, 'beneficiaryVASPname', /1024/],
      [
        { transactionBlockchainInfo: { destination: 'x'.repeat(1025) } },
        'transactionBlockchainInfo.destination',
        /1024/,
      ],
      [
        {
          originator: withOriginatorPerson((p) => {
            p.name[0].nameIdentifier[0].primaryIdentifier = 'x'.repeat(101);
          }),
        },
        'originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier',
        /100 characters/,
      ],
      [
        {
          originator: withOriginatorPerson((p) => {
            p.geographicAddress[0].postCode = '1'.repeat(17);
          }),
        },
        'originator.originatorPersons[0].naturalPerson.geographicAddress[0].postCode',
        /16 characters/,
      ],
      [
        {
          originator: withOriginatorPerson((p) => {
            p.geographicAddress = Array.from({ length: 21 }, () => p.geographicAddress[0]);
          }),
        },
        'originator.originatorPersons[0].naturalPerson.geographicAddress',
        /at most 20 items/,
      ],
      [{ originator: manyNames }, '(body)', /at most 5000/],
    ];
    for (const [over, field, rule] of cases) {
      const key = randomUUID();
      const { status, body } = await call('POST', '/v1/transfers', transfer(over), { 'idempotency-key': key });
      expect([field, status, body.error?.field]).toEqual([field, 400, field]);
      expect(body.error.rule).toMatch(rule);
      expect((await call('GET', `/v1/transfers/${key}`)).status).toBe(404);
      expect(
        (await orch.pool.query('select count(*)::int as n from outgoing_transfers where id = $1', [key])).rows[0].n,
      ).toBe(0);
    }
  });

  it("the agent endpoints pass the network's 400 through with its name and message, instead of a 502", async () => {
    const info = await call('GET', '/tx/info?id=not-a-uuid');
    expect(info).toMatchObject({
      status: 400,
      body: {
        err: { name: 'NotabeneTransactionValidationError', code: 400, message: 'id: must be a transaction id (UUID)' },
      },
    });
    const update = await call('POST', '/tx/update', { id: 'not-a-uuid', txHash: '0xabc' });
    expect(update.status).toBe(400);
    expect(update.body.err).toMatchObject({ name: 'NotabeneTransactionValidationError', code: 400 });
    expect(update.body.err.message).not.toMatch(/network answered/);
  });
});
