/**
 * Issue 21, the orchestrator's side: `POST /v1/transfers/validate` and the classification `POST /v1/transfers` stores
 * and applies, through the API against the sandbox over HTTP. Subsidiary A is in Germany (the EU's rules), B in the
 * US (SUBSIDIARY_JURISDICTIONS); the counterparties' countries come from the sandbox's directory. Prices come from a
 * price API this test serves (the operator's PRICE_API_URL: an outside party), with the table's decimals.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { flattenIvms101 } from '../../lib/ivms101';
import { upsertEntries } from '../../address-book/store/registry';
import { NetworkClient } from '../../network/client';
import {
  addOutsiderVasp,
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// Answers are read field by field.
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const fixture = JSON.parse(readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8')) as Json;
/** USDC: 6 decimals, 1 USD; 1 USD = 0.92 EUR in the table's FX. */
const usdc = (usd: number) => String(Math.round(usd * 1_000_000));
const destination = () => `0x${randomBytes(20).toString('hex')}`;
const NAME = 'beneficiary.beneficiaryPersons[0].naturalPerson.name';
/** Only the names: what every jurisdiction requires below its threshold. */
const namesOnly = {
  originator: { originatorPersons: [{ naturalPerson: fixture.originator.originatorPersons[0].naturalPerson }] },
  beneficiary: { beneficiaryPersons: [{ naturalPerson: fixture.beneficiary.beneficiaryPersons[0].naturalPerson }] },
};
const names = {
  originator: {
    originatorPersons: [{ naturalPerson: { name: fixture.originator.originatorPersons[0].naturalPerson.name } }],
  },
  beneficiary: {
    beneficiaryPersons: [{ naturalPerson: { name: fixture.beneficiary.beneficiaryPersons[0].naturalPerson.name } }],
  },
};

describe('POST /v1/transfers/validate and the classification of POST /v1/transfers (issue 21)', () => {
  const group = groupSeed();
  const us = addOutsiderVasp(group.seed, 'US Counterparty');
  const ch = addOutsiderVasp(group.seed, 'Swiss Counterparty');
  const br = addOutsiderVasp(group.seed, 'Brazilian Counterparty');
  const keyA = createDidKeyRecord();
  const keyB = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let prices: Server;
  const now = () => new Date().toISOString();
  let usdcPriceUSD = 1;

  beforeAll(async () => {
    // The operator's price API: ETH and USDC priced now, BTC last seen two days ago (stale under PRICE_MAX_AGE 1h).
    prices = createServer((req, res) => {
      const asset = new URL(req.url ?? '/', 'http://x').searchParams.get('asset');
      const body =
        asset === 'ETH'
          ? { priceUSD: 3000, at: now() }
          : asset === 'USDC'
            ? { priceUSD: usdcPriceUSD, at: now() }
            : asset === 'BTC'
              ? { priceUSD: 90000, at: new Date(Date.now() - 2 * 86_400_000).toISOString() }
              : undefined;
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((r) => prices.listen(0, '127.0.0.1', r));
    sb = await startSandbox(group.seed);
    for (const [vasp, country] of [
      [us, 'US'],
      [ch, 'CH'],
      [br, 'BR'],
    ] as const) {
      await new NetworkClient(sb.networkConfig(vasp.user)).api
        .post('tf/vasps/update', {
          json: { did: vasp.did, fields: [{ fieldName: 'incorporationCountry', values: [{ value: country }] }] },
        })
        .json();
    }
    // The subsidiaries' own directory entries say what SUBSIDIARY_JURISDICTIONS says: the network classifies alike.
    const gateway = new NetworkClient(sb.networkConfig(group.gatewayUser));
    for (const [did, country] of [
      [group.subA, 'DE'],
      [group.subB, 'US'],
    ] as const) {
      await gateway.api
        .post('tf/vasps/update', {
          json: { did, fields: [{ fieldName: 'incorporationCountry', values: [{ value: country }] }] },
        })
        .json();
    }
    orch = await startOrchestrator(sb.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: group.subA, privateKeyHex: keyA.keys[0].privateKeyHex },
        { vaspDID: group.subB, privateKeyHex: keyB.keys[0].privateKeyHex },
      ]),
      jurisdictions: { subsidiaryCountries: { [group.subA]: 'DE', [group.subB]: 'US' } },
      pricing: {
        apiUrl: `http://127.0.0.1:${(prices.address() as AddressInfo).port}/price`,
        apiTimeoutMs: 2000,
        cacheMs: 0,
        maxAgeMs: 3_600_000,
      },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    if (prices.listening) await new Promise((r) => prices.close(r));
  });

  const body = (over: Record<string, unknown> = {}) => ({
    transactionAsset: 'USDC',
    transactionAmount: usdc(100),
    originatorVASPdid: group.subB,
    beneficiaryVASPdid: us.did,
    transactionBlockchainInfo: { destination: destination() },
    ...over,
  });

  async function validate(payload: unknown, status = 200): Promise<Json> {
    const r = await fetch(`${orch.apiUrl}/v1/transfers/validate`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json' }),
      body: JSON.stringify(payload),
    });
    const json = (await r.json()) as Json;
    if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(json)}`);
    return json;
  }

  async function start(payload: unknown, key = `t-${randomBytes(6).toString('hex')}`) {
    const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': key }),
      body: JSON.stringify(payload),
    });
    return { status: r.status, json: (await r.json()) as Json, key };
  }

  it('an EU subsidiary sending 1 EUR of an asset: TRAVELRULE, the EU-required fields missing as errors', async () => {
    const r = await validate(body({ originatorVASPdid: group.subA, transactionAmount: usdc(1 / 0.92) }));
    expect(r.type).toBe('TRAVELRULE');
    expect(r.isValid).toBe(false);
    expect(r.thresholds.own).toMatchObject({ jurisdiction: 'EU', currency: 'EUR', threshold: 0 });
    expect(r.thresholds.own.amount).toBeCloseTo(1, 2);
    expect(r.errors).toContain(`MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION: ${NAME}`);
    expect(r.details.errors).toContainEqual(expect.objectContaining({ field: 'beneficiary.accountNumber' }));
    expect(r).toMatchObject({ beneficiaryAddressType: 'HOSTED', addressSource: 'DIRECTORY' });
    expect(r.beneficiaryVASPname).toBe('US Counterparty');
    expect(r.price).toMatchObject({ currency: 'EUR', price: 1, priceCurrency: 'USD' });
    expect(r.price.source).toContain('price API');
  });

  it('US → US 2,999 USD: BELOW_THRESHOLD, valid with the names', async () => {
    const r = await validate(body({ transactionAmount: usdc(2999), ...names }));
    expect(r).toMatchObject({ type: 'BELOW_THRESHOLD', isValid: true, errors: [], warnings: [] });
    expect(r.thresholds.own).toMatchObject({ jurisdiction: 'US', threshold: 3000, amount: 2999 });
    const at = await validate(body({ transactionAmount: usdc(3000), ...names }));
    expect(at.type).toBe('TRAVELRULE');
    expect(at.errors).toContain('MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION: beneficiary.accountNumber');
  });

  it("US → Switzerland 500 USD: valid, Switzerland's fields as warnings", async () => {
    const r = await validate(body({ beneficiaryVASPdid: ch.did, transactionAmount: usdc(500), ...names }));
    expect(r).toMatchObject({ type: 'BELOW_THRESHOLD', isValid: true, errors: [] });
    expect(r.thresholds.counterparty).toMatchObject({ jurisdiction: 'CH', currency: 'CHF', threshold: 0 });
    expect(r.warnings).toContain('MISSING_FIELDS_REQUIRED_BY_COUNTERPARTY_JURISDICTION: beneficiary.accountNumber');
  });

  it('a counterparty in a country the table does not know: FATF, 1,000 USD', async () => {
    const r = await validate(body({ beneficiaryVASPdid: br.did, transactionAmount: usdc(1000), ...names }));
    expect(r.thresholds.counterparty).toMatchObject({ jurisdiction: 'FATF', currency: 'USD', threshold: 1000 });
    expect(r.thresholds.counterparty.amount).toBe(1000);
  });

  it('a stale price: UNKNOWN with the reason, and the fields of a Travel Rule transfer required', async () => {
    const r = await validate(body({ transactionAsset: 'BTC', transactionAmount: '1000', ...names }));
    expect(r.type).toBe('UNKNOWN');
    expect(r.isValid).toBe(false);
    expect(r.price.unknown).toMatch(/older than the maximum age/);
    expect(r.errors).toContain('MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION: beneficiary.accountNumber');
    // customAssetPrice prices what the provider cannot.
    const own = await validate(
      body({ transactionAsset: 'BTC', transactionAmount: '1000', customAssetPrice: { priceUSD: 90000, decimals: 8 } }),
    );
    expect(own.type).toBe('BELOW_THRESHOLD');
    expect(own.price.source).toBe('customAssetPrice of the request');
  });

  it('the beneficiary address: the group registry, the network, an ownership proof', async () => {
    const address = destination();
    await upsertEntries(orch.pool, [{ asset: 'USDC', address, tag: '', customerRef: 'c-1', vaspDID: group.subA }]);
    const inGroup = await validate(
      body({ beneficiaryVASPdid: undefined, transactionBlockchainInfo: { destination: address } }),
    );
    expect(inGroup).toMatchObject({ beneficiaryAddressType: 'HOSTED', addressSource: 'GROUP_REGISTRY' });
    // Subsidiary A is German: the counterparty side is the EU's.
    expect(inGroup.thresholds.counterparty.jurisdiction).toBe('EU');
    const unknown = await validate(body({ beneficiaryVASPdid: undefined }));
    expect(unknown).toMatchObject({ beneficiaryAddressType: 'UNKNOWN', addressSource: 'UNKNOWN' });
    const own = await validate(
      body({ beneficiaryVASPdid: undefined, beneficiaryProof: { proof: 'signature', type: 'eip-191' }, ...names }),
    );
    expect(own).toMatchObject({ type: 'NON_CUSTODIAL', beneficiaryAddressType: 'UNHOSTED' });
  });

  it.each([
    ['an amount with a decimal point', { transactionAmount: '1.5' }, 'transactionAmount'],
    ['an amount of 80 digits', { transactionAmount: `1${'0'.repeat(79)}` }, 'transactionAmount'],
    ['an unknown asset', { transactionAsset: 'NOPE' }, 'transactionAsset'],
    [
      'a country code outside ISO 3166',
      {
        originator: {
          originatorPersons: [
            {
              naturalPerson: {
                geographicAddress: [{ addressType: 'HOME', townName: 'X', country: 'ZZ' }],
              },
            },
          ],
        },
      },
      'originator.originatorPersons[0].naturalPerson.geographicAddress[0].country',
    ],
    ['a negative price', { customAssetPrice: { priceUSD: -1, decimals: 6 } }, 'customAssetPrice'],
    ['a NaN price', { customAssetPrice: { priceUSD: 'NaN', decimals: 6 } }, 'customAssetPrice'],
  ])('bad input, %s: 400 naming the field', async (_what, over, field) => {
    const r = await validate(body(over), 400);
    expect(r.error.field.startsWith(field)).toBe(true);
  });

  it('POST /v1/transfers refuses a Travel Rule transfer missing required fields, listing them, and starts nothing', async () => {
    const missingName = await start(
      body({
        transactionAmount: usdc(5000),
        originator: fixture.originator,
        beneficiary: { beneficiaryPersons: [{ naturalPerson: {} }], accountNumber: ['x-1'] },
      }),
    );
    expect(missingName.status).toBe(400);
    expect(missingName.json.error.field).toMatch(/^beneficiary\.beneficiaryPersons\[0\]/);
    const partial = await start(body({ transactionAmount: usdc(5000), ...namesOnly }));
    expect(partial.status).toBe(400);
    expect(partial.json.error.fields).toEqual(
      expect.arrayContaining(['originator.accountNumber', 'beneficiary.accountNumber']),
    );
    expect(partial.json.error.message).toContain('beneficiary.accountNumber');
    const none = await fetch(`${orch.apiUrl}/v1/transfers/${partial.key}`, { headers: orch.headers('viewer') });
    expect(none.status).toBe(404);
  });

  it('a repeat of a stored request answers the transfer, not a new classification, after the price moved', async () => {
    const payload = body({ transactionAmount: usdc(2000), ...namesOnly });
    const first = await start(payload);
    expect(first.status).toBe(202);
    expect(first.json.classification).toMatchObject({ type: 'BELOW_THRESHOLD' });
    usdcPriceUSD = 2; // now 4,000 USD: a Travel Rule transfer, and these names alone would be refused
    try {
      expect((await start(payload)).status).toBe(400);
      const repeat = await start(payload, first.key);
      expect(repeat.status).toBe(200);
      expect(repeat.json.classification).toMatchObject({ type: 'BELOW_THRESHOLD', price: { value: 2000 } });
    } finally {
      usdcPriceUSD = 1;
    }
  });

  it('POST /v1/transfers stores the classification, and a BELOW_THRESHOLD transfer sends only the names', async () => {
    const started = await start(
      body({ transactionAmount: usdc(2999), originator: fixture.originator, beneficiary: fixture.beneficiary }),
    );
    expect(started.status).toBe(202);
    expect(started.json.classification).toMatchObject({ type: 'BELOW_THRESHOLD', isValid: true });
    const state = await eventually(async () => {
      const r = await fetch(`${orch.apiUrl}/v1/transfers/${started.key}`, { headers: orch.headers('viewer') });
      const json = (await r.json()) as Json;
      return json.transactionId ? json : undefined;
    }, 30_000);
    expect(state.classification).toMatchObject({
      type: 'BELOW_THRESHOLD',
      thresholds: { own: { jurisdiction: 'US', threshold: 3000, amount: 2999 } },
      price: { value: 2999, currency: 'USD' },
    });
    expect(state.classification.personalData).toEqual(
      expect.arrayContaining(['originator.originatorPersons[0].naturalPerson.name', NAME]),
    );
    // At the network: the transaction's type, and personal data with the names only.
    const tx = (await new NetworkClient(sb.networkConfig(group.gatewayUser)).api
      .get('tx/info', { searchParams: { id: state.transactionId } })
      .json()) as Json;
    expect(tx.transactionType).toBe('BELOW_THRESHOLD');
    const keys = flattenIvms101(tx.pii).map((e) => e.key);
    expect(keys.length).toBeGreaterThan(0);
    expect(
      keys.every((k) =>
        /^(originator\.originatorPersons|beneficiary\.beneficiaryPersons)\[0\]\.naturalPerson\.name/.test(k),
      ),
    ).toBe(true);
    // A Travel Rule transfer sends everything given.
    const full = await start(
      body({ transactionAmount: usdc(5000), originator: fixture.originator, beneficiary: fixture.beneficiary }),
    );
    expect(full.status).toBe(202);
    expect(full.json.classification).toMatchObject({ type: 'TRAVELRULE', personalData: 'all' });
  });

  it('an unreachable price provider: UNKNOWN, not 5xx', async () => {
    await new Promise((r) => prices.close(r));
    const r = await validate(body({ transactionAsset: 'ETH', transactionAmount: '1000000000000000000', ...names }));
    expect(r.type).toBe('UNKNOWN');
    expect(r.price.unknown).toMatch(/unreachable|no answer/);
  });
});
