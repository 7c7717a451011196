import { fiatFromTable, parsePriceTable } from '../../../policy/prices';
import { ConfigError } from '../../../lib/errors';

describe('the configured price table (POLICY_PRICES)', () => {
  const table = parsePriceTable(
    '{"ETH": {"decimals": 18, "USD": 3000, "EUR": 2750.5}, "BTC": {"decimals": 8, "USD": 90000}}',
  );

  it('turns base units into the policy currency, keeping the fraction', () => {
    expect(fiatFromTable(table, { asset: 'ETH', amount: '1500000000000000000', currency: 'USD' })!.value).toBe(4500);
    expect(fiatFromTable(table, { asset: 'ETH', amount: '1', currency: 'USD' })!.value).toBeCloseTo(3e-15, 20);
    expect(fiatFromTable(table, { asset: 'BTC', amount: '1111', currency: 'USD' })!.value).toBeCloseTo(0.9999, 10);
    expect(fiatFromTable(table, { asset: 'ETH', amount: '2000000000000000000', currency: 'EUR' })).toMatchObject({
      value: 5501,
      source: expect.stringContaining('1 ETH = 2750.5 EUR'),
    });
  });

  it('knows no price it was not given: another asset, another currency, or an amount that is not base units', () => {
    expect(fiatFromTable(table, { asset: 'SOL', amount: '1', currency: 'USD' })).toBeUndefined();
    expect(fiatFromTable(table, { asset: 'BTC', amount: '1', currency: 'EUR' })).toBeUndefined();
    expect(fiatFromTable(table, { asset: 'ETH', amount: '1.5', currency: 'USD' })).toBeUndefined();
    expect(parsePriceTable(undefined)).toEqual({});
  });

  it('refuses a table it cannot read, naming the variable', () => {
    for (const bad of [
      '{',
      '[]',
      '{"ETH": {"USD": 1}}',
      '{"ETH": {"decimals": 18, "usd": 1}}',
      '{"ETH": {"decimals": 18, "USD": -1}}',
    ])
      expect(() => parsePriceTable(bad)).toThrow(ConfigError);
  });
});
