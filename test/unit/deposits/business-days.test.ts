import { addBusinessDays, RETURN_CONFIRMATION_BUSINESS_DAYS } from '../../../deposits/status';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('addBusinessDays: Monday to Friday, UTC, the same time of day', () => {
  it('skips weekends', () => {
    // Monday 2026-11-30 10:00 + 10 business days: two whole weeks on, Monday 2026-12-14.
    expect(iso(addBusinessDays(at('2026-11-30T10:00:00Z'), 10))).toBe('2026-12-14T10:00:00.000Z');
    // Wednesday + 3: Thursday, Friday, Monday.
    expect(iso(addBusinessDays(at('2026-12-02T08:30:00Z'), 3))).toBe('2026-12-07T08:30:00.000Z');
    expect(iso(addBusinessDays(at('2026-12-04T23:59:00Z'), 1))).toBe('2026-12-07T23:59:00.000Z');
  });

  it('from a weekend, the first business day is Monday', () => {
    expect(iso(addBusinessDays(at('2026-11-28T21:00:00Z'), 1))).toBe('2026-11-30T21:00:00.000Z');
    expect(iso(addBusinessDays(at('2026-11-29T12:00:00Z'), 1))).toBe('2026-11-30T12:00:00.000Z');
    // Saturday + 10: Monday 30 November is the first, Friday 11 December the tenth.
    expect(iso(addBusinessDays(at('2026-11-28T21:00:00Z'), RETURN_CONFIRMATION_BUSINESS_DAYS))).toBe(
      '2026-12-11T21:00:00.000Z',
    );
  });

  it('zero days is the same instant; ten business days are 14 calendar days from a weekday', () => {
    expect(addBusinessDays(at('2026-12-01T00:00:00Z'), 0)).toBe(at('2026-12-01T00:00:00Z'));
    for (const day of ['2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04']) {
      const from = at(`${day}T06:00:00Z`);
      expect(addBusinessDays(from, 10) - from).toBe(14 * 24 * 3600 * 1000);
    }
  });
});
