import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPricing, isPriced, type PriceResult } from '../../../pricing';
import { loadPricingConfig } from '../../../pricing/config';
import { decimalOf, multiply } from '../../../pricing/decimal';
import { parseTable } from '../../../pricing/table';

const table = parseTable(
  {
    source: 'test table',
    assets: {
      ETH: { decimals: 18, priceUSD: 3000.123456789, at: '2026-11-28T00:00:00Z' },
      USDC: { decimals: 6, priceUSD: 1, at: '2026-11-28T00:00:00Z' },
      OLD: { decimals: 0, priceUSD: 5, at: '2020-01-01T00:00:00Z' },
    },
    fx: { at: '2026-11-28T00:00:00Z', perUSD: { EUR: 0.92, KRW: 1400 } },
  },
  'test',
);
const now = () => Date.parse('2026-11-28T00:30:00Z');
const config = loadPricingConfig({});
const value = (r: PriceResult) => (isPriced(r) ? r.value : r.unknown);

describe('exact conversion', () => {
  it('prices 18-decimal base units without float drift', async () => {
    const pricing = createPricing(config, { table, now });
    // 1 wei short of 1,000,000 ETH: a float product would lose the last digits entirely; the exact one keeps them.
    const r = await pricing.toFiat({ asset: 'ETH', amount: '999999999999999999999999', currency: 'USD' });
    expect(value(r)).toBe(Number('3000123456.788999999999999996999876543211'));
    expect(value(await pricing.toFiat({ asset: 'eth', amount: '1', currency: 'USD' }))).toBe(3.000123456789e-15);
    expect(value(await pricing.toFiat({ asset: 'ETH', amount: '10' + '0'.repeat(17), currency: 'USD' }))).toBe(
      3000.123456789,
    );
  });

  it('multiplies exact decimals, including printed exponents', () => {
    expect(decimalOf(2.2)).toEqual({ digits: 22n, scale: 1 });
    expect(decimalOf(1e-7)).toEqual({ digits: 1n, scale: 7 });
    expect(decimalOf(1e21)).toEqual({ digits: 10n ** 21n, scale: 0 });
    expect(multiply(3n, 1, [decimalOf(0.1)])).toBe(0.03); // 0.3 * 0.1 as floats is 0.030000000000000006
    expect(() => decimalOf(NaN)).toThrow();
    expect(() => decimalOf(-1)).toThrow();
  });
});

describe('FX and sources', () => {
  it('converts through the table rate and names both sources', async () => {
    const pricing = createPricing(config, { table, now });
    const r = await pricing.toFiat({ asset: 'USDC', amount: '1000000000', currency: 'EUR' });
    expect(r).toEqual({
      value: 920,
      currency: 'EUR',
      price: 1,
      priceCurrency: 'USD',
      source: 'test table; FX USD→EUR 0.92 of 2026-11-28T00:00:00Z',
      at: '2026-11-28T00:00:00Z',
    });
    expect(value(await pricing.toFiat({ asset: 'USDC', amount: '1000000', currency: 'KRW' }))).toBe(1400);
    expect(value(await pricing.toFiat({ asset: 'USDC', amount: '1', currency: 'XYZ' }))).toMatch(/FX rate/);
  });

  it('uses customAssetPrice with its own decimals, and refuses a bad one', async () => {
    const pricing = createPricing(config, { table, now });
    const r = await pricing.toFiat({
      asset: 'NEWCOIN',
      amount: '2500',
      currency: 'USD',
      customAssetPrice: { priceUSD: 4, decimals: 3 },
    });
    expect(isPriced(r) && r).toMatchObject({ value: 10, source: 'customAssetPrice of the request' });
    const bad = await pricing.toFiat({
      asset: 'ETH',
      amount: '1',
      currency: 'USD',
      customAssetPrice: { priceUSD: NaN, decimals: 18 },
    });
    expect(value(bad)).toMatch(/priceUSD/);
  });

  it('says why instead of guessing: unknown asset, bad amount', async () => {
    const pricing = createPricing(config, { table, now });
    expect(value(await pricing.toFiat({ asset: 'DOGE', amount: '1', currency: 'USD' }))).toMatch(/not in the price/);
    expect(value(await pricing.toFiat({ asset: 'ETH', amount: '1.5', currency: 'USD' }))).toMatch(/digits/);
    expect(value(await pricing.toFiat({ asset: 'ETH', amount: '9'.repeat(80), currency: 'USD' }))).toMatch(/digits/);
  });

  it('covers the demo and test assets in the embedded table', () => {
    const pricing = createPricing(config);
    for (const asset of ['ETH', 'BTC', 'USDC', 'USDT', 'XRP', 'SOL']) expect(pricing.decimals(asset)).toBeDefined();
  });
});

describe('staleness', () => {
  it('treats a price older than PRICE_MAX_AGE as unknown, with the reason', async () => {
    const pricing = createPricing(loadPricingConfig({ PRICE_MAX_AGE: '1h' }), { table, now });
    expect(value(await pricing.toFiat({ asset: 'OLD', amount: '1', currency: 'USD' }))).toMatch(
      /from 2020-01-01T00:00:00.*older than the maximum age of 3600 s/,
    );
    expect(value(await pricing.toFiat({ asset: 'ETH', amount: '1', currency: 'USD' }))).toBeGreaterThan(0);
  });
});

describe('the price API', () => {
  let server: Server;
  let calls = 0;
  let answer: { status: number; body: unknown; delayMs?: number } = { status: 200, body: {} };
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      calls++;
      setTimeout(() => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      }, answer.delayMs ?? 0);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/price`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('prices from the API, caches it, and reports an error, a stale price and a timeout as unknown', async () => {
    const fresh = new Date(now() - 60_000).toISOString();
    answer = { status: 200, body: { priceUSD: 2000, at: fresh } };
    // A generous timeout where the answer is meant to arrive (a loaded machine answers slowly); a short one, against
    // an answer held far longer, where the timeout is the point.
    const pricing = createPricing(loadPricingConfig({ PRICE_API_URL: url, PRICE_API_TIMEOUT: '10s' }), { table, now });
    calls = 0;
    const r = await pricing.toFiat({ asset: 'ETH', amount: '5' + '0'.repeat(17), currency: 'USD' });
    expect(isPriced(r) && r).toMatchObject({ value: 1000, price: 2000, at: fresh, source: `price API ${url}` });
    await pricing.toFiat({ asset: 'ETH', amount: '1', currency: 'USD' });
    expect(calls).toBe(1);

    const other = createPricing(loadPricingConfig({ PRICE_API_URL: url, PRICE_API_TIMEOUT: '10s' }), { table, now });
    answer = { status: 200, body: { priceUSD: 2000, at: '2026-11-27T00:00:00Z' } };
    expect(value(await other.toFiat({ asset: 'ETH', amount: '1', currency: 'USD' }))).toMatch(/older than/);
    answer = { status: 503, body: {} };
    expect(value(await other.toFiat({ asset: 'USDC', amount: '1', currency: 'USD' }))).toMatch(/answered 503/);
    const impatient = createPricing(loadPricingConfig({ PRICE_API_URL: url, PRICE_API_TIMEOUT: '200ms' }), {
      table,
      now,
    });
    answer = { status: 200, body: { priceUSD: 1, at: fresh }, delayMs: 3000 };
    expect(value(await impatient.toFiat({ asset: 'USDC', amount: '1', currency: 'USD' }))).toMatch(/within 200 ms/);
  });

  it('reports an unreachable API as unknown', async () => {
    const pricing = createPricing(loadPricingConfig({ PRICE_API_URL: 'http://127.0.0.1:1/price' }), { table, now });
    expect(value(await pricing.toFiat({ asset: 'ETH', amount: '1', currency: 'USD' }))).toBe(
      'the price API is unreachable',
    );
  });
});
