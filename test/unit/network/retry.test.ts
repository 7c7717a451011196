import { AuthenticationError, RateLimitedError, UpstreamUnavailableError } from '../../../lib/errors';
import { retryTransient, type TransientRetryPolicy } from '../../../network/retry';

/** A clock that moves only when the retry waits, so each test is exact and instant. */
function fakeTime() {
  let t = 0;
  const waits: number[] = [];
  return { now: () => t, wait: async (ms: number) => void (waits.push(ms), (t += ms)), waits };
}
const policy: TransientRetryPolicy = { maxElapsedMs: 60_000, initialDelayMs: 1000, maxDelayMs: 8000 };

describe('retryTransient', () => {
  it('tries again after transient failures, backing off, and returns the first success', async () => {
    const time = fakeTime();
    let calls = 0;
    const beats: number[] = [];
    const result = await retryTransient(
      'GET /x',
      async () => {
        calls += 1;
        if (calls < 5) throw new UpstreamUnavailableError('503');
        return 'ok';
      },
      { ...policy, onRetry: ({ attempt }) => beats.push(attempt) },
      time.now,
      time.wait,
    );
    expect(result).toBe('ok');
    expect(calls).toBe(5);
    expect(beats).toEqual([1, 2, 3, 4]);
    // Full jitter over the upper half of each doubling step: 1 s, 2 s, 4 s, then the 8 s cap.
    const caps = [1000, 2000, 4000, 8000];
    time.waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(caps[i]! / 2);
      expect(w).toBeLessThanOrEqual(caps[i]!);
    });
  });

  it('waits out a 429 for the block it names, never less', async () => {
    const time = fakeTime();
    let calls = 0;
    await retryTransient(
      'DELETE /x',
      async () => {
        if (++calls === 1) throw new RateLimitedError('429', { retryAfterMs: 30_000 });
        return undefined;
      },
      policy,
      time.now,
      time.wait,
    );
    expect(time.waits).toEqual([30_000]);
  });

  it("throws a permanent failure at once, and a transient one once the policy's time is spent", async () => {
    const time = fakeTime();
    let calls = 0;
    await expect(
      retryTransient(
        'GET /x',
        async () => {
          calls += 1;
          throw new AuthenticationError('401');
        },
        policy,
        time.now,
        time.wait,
      ),
    ).rejects.toBeInstanceOf(AuthenticationError);
    expect(calls).toBe(1);

    await expect(
      retryTransient(
        'GET /x',
        async () => {
          throw new UpstreamUnavailableError('still 503');
        },
        policy,
        time.now,
        time.wait,
      ),
    ).rejects.toThrow('still 503');
    expect(time.now()).toBeLessThanOrEqual(policy.maxElapsedMs);
    expect(time.waits.length).toBeGreaterThan(5);
  });
});
