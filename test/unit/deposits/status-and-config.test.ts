import { loadCustodyConfig } from '../../../custody/config';
import { loadDepositConfig } from '../../../deposits/config';
import { depositStatusFor, isFinalDepositStatus, nextRecheck, notifyAgain } from '../../../deposits/status';
import { ConfigError } from '../../../lib/errors';

describe("deposits: the decision from the network's status, the rechecks, the settings", () => {
  it('releases on ACCEPTED, requires a return on DECLINED or REJECTED, awaits data while INCOMPLETE, holds otherwise', () => {
    expect(depositStatusFor('ACCEPTED')).toBe('RELEASED');
    expect(depositStatusFor('DECLINED')).toBe('RETURN_REQUIRED');
    expect(depositStatusFor('REJECTED')).toBe('RETURN_REQUIRED');
    expect(depositStatusFor('INCOMPLETE')).toBe('AWAITING_DATA');
    for (const held of [undefined, 'SENT', 'ACK', 'NOT_READY', 'CANCELLED'])
      expect({ held, status: depositStatusFor(held) }).toEqual({ held, status: 'HELD' });
    expect(isFinalDepositStatus('RELEASED')).toBe(true);
    expect(isFinalDepositStatus('RETURN_REQUIRED')).toBe(true);
    expect(isFinalDepositStatus('AWAITING_DATA')).toBe(false);
  });

  it('reports again while no message stands (INCOMPLETE only within the window), and reads a standing one', () => {
    expect(notifyAgain(undefined, false)).toBe(true);
    expect(notifyAgain('CANCELLED', false)).toBe(true);
    expect(notifyAgain('INCOMPLETE', true)).toBe(true);
    expect(notifyAgain('INCOMPLETE', false)).toBe(false);
    expect(notifyAgain('SENT', true)).toBe(false);
  });

  it('doubles the wait between checks up to the maximum', () => {
    const waits: number[] = [];
    let w: number | undefined;
    for (let i = 0; i < 5; i++) waits.push((w = nextRecheck(w, 5_000, 30_000)));
    expect(waits).toEqual([5_000, 10_000, 20_000, 30_000, 30_000]);
  });

  it('reads DEPOSIT_* with their defaults, and refuses a value that is not a duration', () => {
    expect(loadDepositConfig({})).toEqual({
      matchWindowMs: 3_600_000,
      dataDeadlineMs: 72 * 3_600_000,
      recheckInitialMs: 5_000,
      recheckMaxMs: 300_000,
      deadlineAction: 'return',
      byCountry: {},
      custodyCallbacks: false,
    });
    expect(loadDepositConfig({ DEPOSIT_DATA_DEADLINE: '24h', DEPOSIT_MATCH_WINDOW: '30m' })).toMatchObject({
      dataDeadlineMs: 86_400_000,
      matchWindowMs: 1_800_000,
    });
    expect(() => loadDepositConfig({ DEPOSIT_DATA_DEADLINE: '3 days' })).toThrow(ConfigError);
    expect(() => loadDepositConfig({ DEPOSIT_DATA_DEADLINE: '3 days' })).toThrow(/DEPOSIT_DATA_DEADLINE/);
    // Decisions are called back only where the custody system gave a URL.
    expect(loadDepositConfig({}).custodyCallbacks).toBe(false);
    expect(loadDepositConfig({}, { callbackUrl: 'https://custody.internal/cb' }).custodyCallbacks).toBe(true);
  });

  it('reads CUSTODY_CALLBACK_URL with its secret; a URL without a usable secret is refused', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(
      loadCustodyConfig({
        CUSTODY_CALLBACK_URL: 'https://custody.internal/deposits/',
        CUSTODY_CALLBACK_SECRET: secret,
      }),
    ).toEqual({ callbackUrl: 'https://custody.internal/deposits', callbackSecret: secret });
    expect(loadCustodyConfig({ CUSTODY_CALLBACK_SECRET: secret }).callbackUrl).toBeUndefined();
    for (const bad of [undefined, 'whsec_short', ''])
      expect(() =>
        loadCustodyConfig({ CUSTODY_CALLBACK_URL: 'https://custody.internal', CUSTODY_CALLBACK_SECRET: bad }),
      ).toThrow(/CUSTODY_CALLBACK_SECRET/);
    expect(() => loadCustodyConfig({ CUSTODY_CALLBACK_URL: 'ftp://x', CUSTODY_CALLBACK_SECRET: secret })).toThrow(
      /CUSTODY_CALLBACK_URL/,
    );
  });

  it("reads the deadline's action and the deadlines per country, and refuses what they cannot be", () => {
    expect(
      loadDepositConfig({
        DEPOSIT_DEADLINE_ACTION: 'review',
        DEPOSIT_DEADLINES_BY_COUNTRY: '{"ch": {"after": "24h", "action": "return"}, "DE": {"action": "release"}}',
      }),
    ).toMatchObject({
      deadlineAction: 'review',
      byCountry: { CH: { dataDeadlineMs: 86_400_000, deadlineAction: 'return' }, DE: { deadlineAction: 'release' } },
    });
    for (const [env, named] of [
      [{ DEPOSIT_DEADLINE_ACTION: 'credit' }, /DEPOSIT_DEADLINE_ACTION.*"credit" is not a deadline action/],
      [{ DEPOSIT_DEADLINES_BY_COUNTRY: '{"XX": {}}' }, /DEPOSIT_DEADLINES_BY_COUNTRY.*"XX" is not an ISO 3166-1/],
      [{ DEPOSIT_DEADLINES_BY_COUNTRY: '{"CH": {"after": "a day"}}' }, /DEPOSIT_DEADLINES_BY_COUNTRY\.CH\.after/],
      [{ DEPOSIT_DEADLINES_BY_COUNTRY: '{"CH": {"action": "keep"}}' }, /DEPOSIT_DEADLINES_BY_COUNTRY\.CH\.action/],
      [{ DEPOSIT_DEADLINES_BY_COUNTRY: '[1]' }, /DEPOSIT_DEADLINES_BY_COUNTRY.*not an object/],
      [{ DEPOSIT_DEADLINES_BY_COUNTRY: '{' }, /DEPOSIT_DEADLINES_BY_COUNTRY.*not JSON/],
    ] as const) {
      let thrown: unknown;
      try {
        loadDepositConfig(env);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toMatch(named);
    }
  });
});
