import { AuthFailureThrottle, failureDelayMs } from '../../../client/api/auth/failure-throttle';

describe('the refused-credential throttle', () => {
  it('answers the first `max` refusals of a window at once, then holds each further one longer, up to the cap', () => {
    let now = 0;
    const throttle = new AuthFailureThrottle(
      { max: 3, windowMs: 60_000, baseDelayMs: 100, maxDelayMs: 1000 },
      () => now,
    );
    for (let i = 0; i < 3; i++) expect(throttle.refused('10.0.0.1')).toBeUndefined();
    now = 15_000;
    expect(throttle.refused('10.0.0.1')).toEqual({ delayMs: 100, retryAfterSeconds: 45 });
    expect([1, 2, 3, 4, 5].map(() => throttle.refused('10.0.0.1')!.delayMs)).toEqual([200, 400, 800, 1000, 1000]);
    // Another address has its own count.
    expect(throttle.refused('10.0.0.2')).toBeUndefined();
    // A new window starts over.
    now = 60_000;
    expect(throttle.refused('10.0.0.1')).toBeUndefined();
  });

  it('keeps at most `maxAddresses` windows, dropping ended ones first, then the oldest', () => {
    let now = 0;
    const throttle = new AuthFailureThrottle({ max: 1, windowMs: 1000, maxAddresses: 3 }, () => now);
    throttle.refused('a');
    now = 500;
    throttle.refused('b');
    throttle.refused('c');
    now = 1200; // a's window has ended
    throttle.refused('d');
    expect(throttle.size).toBe(3);
    throttle.refused('e');
    expect(throttle.size).toBe(3);
    // b had the oldest open window: dropped to make room, so it starts over; c is still remembered, past its limit.
    expect(throttle.refused('c')).toMatchObject({ delayMs: expect.any(Number) });
    expect(throttle.refused('b')).toBeUndefined();
  });

  it('doubles from the base and never passes the cap, however many refusals', () => {
    expect([0, 1, 2, 3, 10, 100, 10_000].map((n) => failureDelayMs(n, 500, 10_000))).toEqual([
      0, 500, 1000, 2000, 10_000, 10_000, 10_000,
    ]);
  });
});
