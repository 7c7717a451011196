import { sideBySideLines, sideBySideRound, type SideBySideReading } from '../../../bench/side-by-side';
import { median } from '../../../bench/stats';

describe('bench/side-by-side: two workers in one round, each by the transfers it carried', () => {
  it('turns CPU per transfer of the whole round into CPU per transfer each worker carried', () => {
    // 101 transfers in the round, 51 to the worker with the setting: 5,100 ms and 4,000 ms of CPU in all.
    const cpu = { 'worker 1': 5100 / 101, 'worker 2': 4000 / 101, temporal: 30 };
    const round = sideBySideRound({ cpu, carried: { withIt: 51, without: 50 }, idle: [12, 4], first: 'with' });
    expect(round.withIt).toBeCloseTo(100, 9);
    expect(round.without).toBeCloseTo(80, 9);
    expect(round).toMatchObject({ first: 'with', idle: { withIt: 12, without: 4 } });
  });

  it('gives the median of the rounds’ ratios and its verdict against the target', () => {
    const rounds = [
      { withIt: 103, without: 100, first: 'with' as const, idle: { withIt: 9, without: 5 } },
      { withIt: 99, without: 100, first: 'without' as const, idle: { withIt: 11, without: 5 } },
      { withIt: 150, without: 100, first: 'with' as const, idle: { withIt: 10, without: 8 } },
    ];
    const [cpu] = sideBySideLines('both', rounds, 1.03);
    expect(cpu).toContain("each round's ratio 1.030, 0.990, 1.500");
    expect(cpu).toContain('median ratio 1.030× (target ≤ 1.03×: met)');
    expect(sideBySideLines('both', rounds, 1.03)[1]).toContain('while idle: without 6.0, with 10.0 ms (means)');
    const [missed] = sideBySideLines('both', rounds.slice(2), 1.03);
    expect(missed).toContain('median ratio 1.500× (target ≤ 1.03×: NOT met)');
  });

  it('takes the mean of the two middle rounds for an even count, not the lower one', () => {
    expect(median([1.04, 0.97, 1.019, 0.974])).toBeCloseTo(0.9965, 9);
    expect(median([1.2, 1.0, 1.1])).toBe(1.1);
    expect(median([])).toBeNaN();
    const rounds = [1.04, 0.97, 1.02, 0.98].map((r) => ({
      withIt: r * 100,
      without: 100,
      first: 'with' as const,
      idle: { withIt: 1, without: 1 },
    }));
    expect(sideBySideLines('tracing', rounds, 1.03)[0]).toContain('median ratio 1.000×');
  });

  it('splits each worker’s CPU by kind of thread, per transfer it carried, and prints the means', () => {
    const seconds = (main: number, helpers: number, workflow: number, temporalCore: number) => ({
      main,
      helpers,
      workflow,
      temporalCore,
    });
    // Rounds of 4 ms per transfer for each worker, idle 1 ms a second: what differs is carried, first and threads.
    const roundOf = (
      withIt: number,
      without: number,
      first: 'with' | 'without',
      threads: SideBySideReading['threads'],
    ) =>
      sideBySideRound({
        cpu: { 'worker 1': 4, 'worker 2': 4 },
        carried: { withIt, without },
        idle: [1, 1],
        first,
        threads,
      });
    const round = roundOf(50, 40, 'without', [seconds(1, 0.5, 0.25, 0.1), seconds(0.8, 0.4, 0.2, 0.08)]);
    expect(round.threads?.withIt).toEqual({ main: 20, helpers: 10, workflow: 5, temporalCore: 2 });
    expect(round.threads?.without).toEqual({ main: 20, helpers: 10, workflow: 5, temporalCore: 2 });
    const other = roundOf(50, 50, 'with', [seconds(1.1, 0.5, 0.25, 0.1), seconds(1, 0.5, 0.25, 0.15)]);
    const lines = sideBySideLines('both', [round, other], 1.03);
    expect(lines).toContainEqual(
      expect.stringContaining(
        "by thread, without → with (means, ms): main thread 20.00 → 21.00 (+1.00), V8's and libuv's threads 10.00 → " +
          "10.00 (+0.00), workflow thread 5.00 → 5.00 (+0.00), the SDK's Rust threads 2.50 → 2.00 (-0.50)",
      ),
    );
    // A round without a reading of either worker's threads prints no breakdown.
    const unread = roundOf(50, 50, 'with', [undefined, seconds(1, 1, 1, 1)]);
    expect(unread.threads).toBeUndefined();
    expect(sideBySideLines('both', [round, unread], 1.03).join('\n')).not.toContain('by thread');
  });
});
