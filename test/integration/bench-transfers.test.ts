import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** The pids of live processes whose environment names one of these task queues (the bench's worker processes). */
function processesPolling(queues: Set<string>): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.some((v) => v.startsWith('TEMPORAL_TASK_QUEUE=') && queues.has(v.slice('TEMPORAL_TASK_QUEUE='.length))))
        pids.push(Number(entry));
    } catch {
      // Gone in between, or not ours to read.
    }
  }
  return pids;
}

/**
 * `npm run bench:transfers` end to end at a tiny scale: the Temporal path, the side-by-side observability rounds in
 * both start orders (issue 24) and the direct path, each through a Temporal dev server, PostgreSQL and a sandbox of the
 * bench's own. The figures are not judged here (timed assertions never live in the suite); the benchmark's arithmetic
 * is unit-tested in test/unit/bench. What is checked is what a broken benchmark would get wrong: it finishes, it loses
 * or duplicates no transfer, it prints each path's figures and the per-thread split, and it leaves no worker process
 * behind (each side-by-side round starts two and must stop both).
 */
describe('bench:transfers runs end to end', () => {
  it('runs the Temporal, side-by-side and direct paths, prints their figures and leaves no worker behind', async () => {
    const env: NodeJS.ProcessEnv = {
      // What the bench needs, and not the suite's per-run settings (TEST_*: its Temporal server, its database): the
      // bench makes its own run. DATABASE_URL names the PostgreSQL server to make it on, when the suite was given one.
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(process.env.CI && { CI: process.env.CI }),
      ...(process.env.DATABASE_URL && { DATABASE_URL: process.env.DATABASE_URL }),
      ...(process.env.TMPDIR && { TMPDIR: process.env.TMPDIR }),
      BENCH_PATHS: 'temporal,observability-paired,direct',
      BENCH_TRANSFERS: '8',
      BENCH_CONCURRENCY: '4',
      BENCH_OBSERVABILITY_PAIRED_ROUNDS: '2',
      BENCH_OBSERVABILITY_PAIRED_TRANSFERS: '8',
      BENCH_OBSERVABILITY_PAIRED_IDLE_SECONDS: '1',
      BENCH_FLOOR: 'off',
      BENCH_COST: 'off',
    };
    const child = spawn(process.execPath, [resolve(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bench/transfers.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    // A worker left running would hold these pipes open, and with them this test's process.
    child.stdout.destroy();
    child.stderr.destroy();
    if (code !== 0) throw new Error(`bench:transfers exited ${code}:\n${output.slice(-4000)}`);

    expect(output).toContain('check: 0 failed, 0 lost, 0 duplicated in every run');
    expect(output).toMatch(/\| through the API and Temporal, 1 worker process \| 8 \| 0 \| 0 \| 0 \|/);
    expect(output).toMatch(/\| direct, without Temporal \| 8 \| 0 \| 0 \| 0 \|/);
    // Both start orders, each round with its ratio and its split by thread.
    const round = (n: number, first: string) =>
      new RegExp(
        `side by side, round ${n}: worker with it [\\d.]+, without [\\d.]+ ms CPU per transfer it carried: ` +
          `[\\d.]+× \\(${first} started first\\); idle before: .*; by thread, without → with: main thread [\\d.]+ → `,
      );
    expect(output).toMatch(round(1, 'the one with it'));
    expect(output).toMatch(round(2, 'the one without'));
    expect(output).toMatch(/side by side, CPU per transfer of the worker process: .* median ratio [\d.]+× \(target/);
    expect(output).toMatch(/side by side, CPU per transfer by thread, without → with \(means, ms\): main thread/);
    expect(output).toMatch(/spans the collector sink received: [1-9]\d*/);

    // The first orchestrator, two per side-by-side round, and the one started again after them: six task queues (as
    // the bench names them when it starts their workers), and none has a worker process left once the bench has exited.
    const queues = new Set([...output.matchAll(/on task queue (bench-[0-9a-f-]{36})$/gm)].map((m) => m[1]!));
    expect(queues.size).toBeGreaterThanOrEqual(6);
    const left = processesPolling(queues);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  }, 600_000);
});
