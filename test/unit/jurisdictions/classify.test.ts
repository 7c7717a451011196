import { classifyTransfer, jurisdictionTable, rulesOf, type TransferFacts } from '../../../jurisdictions';
import { loadJurisdictionConfig } from '../../../jurisdictions/config';
import { createPricing } from '../../../pricing';
import { loadPricingConfig } from '../../../pricing/config';
import { parseTable } from '../../../pricing/table';
import { isCountryCode } from '../../../lib/countries';

const table = parseTable(
  {
    assets: {
      USDC: { decimals: 6, priceUSD: 1, at: '2026-11-28T00:00:00Z' },
      OLD: { decimals: 6, priceUSD: 1, at: '2020-01-01T00:00:00Z' },
    },
    fx: { at: '2026-11-28T00:00:00Z', perUSD: { EUR: 0.92, CHF: 0.88 } },
  },
  'test',
);
const pricing = createPricing(loadPricingConfig({ PRICE_MAX_AGE: '1d' }), {
  table,
  now: () => Date.parse('2026-11-28T01:00:00Z'),
});
const usdc = (dollars: number) => String(BigInt(Math.round(dollars * 1e6)));
const person = (name: string) => [{ naturalPerson: { name: [{ nameIdentifier: [{ primaryIdentifier: name }] }] } }];
const beneficiaryOnly = { beneficiary: { beneficiaryPersons: person('Bob') } };
const base: TransferFacts = { asset: 'USDC', amount: usdc(1), beneficiaryAddressType: 'HOSTED' };

describe('the jurisdictions table', () => {
  it('gives every value a source and a confidence, in valid countries and currencies', () => {
    const t = jurisdictionTable();
    for (const j of [t.fatf, ...t.jurisdictions]) {
      expect(j.source).toBeTruthy();
      expect(['primary', 'notabene', 'secondary']).toContain(j.confidence);
      expect(j.selfHostedProof.source).toBeTruthy();
      expect(j.currency).toMatch(/^[A-Z]{3}$/);
      for (const c of j.countryCodes ?? []) expect(isCountryCode(c)).toBe(true);
    }
    for (const c of ['DE', 'FR', 'US', 'GB', 'CH', 'SG', 'CA', 'KR', 'HK', 'AE', 'JP'])
      expect(rulesOf(c)).toBeDefined();
    expect(rulesOf('DE')!.countryCode).toBe('EU');
    expect(rulesOf('BR')).toBeUndefined();
  });

  it('reads each subsidiary country from configuration and refuses a non-ISO code', () => {
    expect(loadJurisdictionConfig({ SUBSIDIARY_JURISDICTIONS: '{"did:a": "de"}' }).subsidiaryCountries).toEqual({
      'did:a': 'DE',
    });
    expect(() => loadJurisdictionConfig({ SUBSIDIARY_JURISDICTIONS: '{"did:a": "XX"}' })).toThrow(/ISO 3166/);
  });
});

describe('classifyTransfer', () => {
  it('EU subsidiary, 1 EUR: a Travel Rule transfer (threshold 0)', async () => {
    const c = await classifyTransfer({ ...base, ownCountry: 'DE', amount: usdc(1 / 0.92) }, pricing);
    expect(c.type).toBe('TRAVELRULE');
    expect(c.thresholds.own).toMatchObject({ jurisdiction: 'EU', currency: 'EUR', threshold: 0 });
    expect(c.thresholds.own.amount).toBeCloseTo(1, 6);
  });

  it('US to US, 2,999 USD: below the threshold', async () => {
    const c = await classifyTransfer(
      { ...base, ownCountry: 'US', counterpartyCountry: 'US', amount: usdc(2999), ivms101: beneficiaryOnly },
      pricing,
    );
    expect(c.type).toBe('BELOW_THRESHOLD');
    expect(c.thresholds.own).toMatchObject({ jurisdiction: 'US', threshold: 3000, amount: 2999 });
  });

  it('US to Switzerland, 500 USD: valid for the own side, warnings for the counterparty', async () => {
    const ivms101 = {
      originator: { originatorPersons: person('Alice') },
      beneficiary: { beneficiaryPersons: person('Bob') },
    };
    const c = await classifyTransfer(
      { ...base, ownCountry: 'US', counterpartyCountry: 'CH', amount: usdc(500), ivms101 },
      pricing,
    );
    expect(c.type).toBe('BELOW_THRESHOLD');
    expect(c.errors).toEqual([]);
    expect(c.warnings.map((w) => w.field)).toContain('originator.accountNumber');
    expect(c.thresholds.counterparty).toMatchObject({ jurisdiction: 'CH', currency: 'CHF', threshold: 0 });
  });

  it('an unknown counterparty country falls back to FATF: 1,000 USD', async () => {
    const c = await classifyTransfer({ ...base, ownCountry: 'US', counterpartyCountry: 'BR' }, pricing);
    expect(c.thresholds.counterparty).toMatchObject({ jurisdiction: 'FATF', currency: 'USD', threshold: 1000 });
    const none = await classifyTransfer(base, pricing);
    expect(none.thresholds.own).toMatchObject({ jurisdiction: 'FATF', threshold: 1000 });
  });

  it('a stale price: UNKNOWN with the reason', async () => {
    const c = await classifyTransfer({ ...base, asset: 'OLD' }, pricing);
    expect(c.type).toBe('UNKNOWN');
    expect(c.errors[0]!.message).toMatch(/older than the maximum age/);
    expect(c.price).toEqual({ unknown: expect.stringMatching(/2020-01-01/) });
  });

  it('above the threshold, a missing beneficiary name is an error naming its IVMS101 path', async () => {
    const c = await classifyTransfer(
      { ...base, amount: usdc(5000), ivms101: { originator: { originatorPersons: person('Alice') } } },
      pricing,
    );
    expect(c.type).toBe('TRAVELRULE');
    expect(c.errors.map((e) => e.field)).toContain('beneficiary.beneficiaryPersons[0].naturalPerson.name');
    expect(c.errors.every((e) => e.code === 'MISSING_FIELDS_REQUIRED_BY_YOUR_JURISDICTION')).toBe(true);
  });

  it('a self-hosted wallet: NON_CUSTODIAL, with a proof required above 1,000 EUR in the EU', async () => {
    const small = await classifyTransfer(
      { ...base, ownCountry: 'FR', beneficiaryAddressType: 'UNHOSTED', amount: usdc(500) },
      pricing,
    );
    expect(small.type).toBe('NON_CUSTODIAL');
    expect(small.errors.map((e) => e.code)).not.toContain('OWNERSHIP_PROOF_REQUIRED');
    const large = await classifyTransfer(
      { ...base, ownCountry: 'FR', beneficiaryAddressType: 'UNHOSTED', amount: usdc(2000) },
      pricing,
    );
    expect(large.errors.map((e) => e.code)).toContain('OWNERSHIP_PROOF_REQUIRED');
  });
});
