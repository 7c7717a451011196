import { sideBySideLines, sideBySideRound } from '../../../bench/side-by-side';
import { median } from '../../../bench/stats';

describe('bench/side-by-side: two workers in one round, each by the transfers it carried', () => {
  it('turns CPU per transfer of the whole round into CPU per transfer each worker carried', () => {
    // 101 transfers in the round, 51 to the worker with the setting: 5,100 ms and 4,000 ms of CPU in all.
    const cpu = { 'worker 1': 5100 / 101, 'worker 2': 4000 / 101, temporal: 30 };
    const round = sideBySideRound(cpu, { withIt: 51, without: 50 }, [12, 4], 'with');
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
});
