/**
 * `npm run bench:worker-start`: how long a worker process takes from its start to polling its task queue, run from
 * source (tsx, bundling workflows/ at start: how `npm start` runs) against the compiled build (`npm run build`:
 * dist/ and its prebuilt workflow bundle, how the image and `npm run start:cluster` run), measured alternately in one
 * run against one Temporal dev server and database. Prints each run and the medians' ratio. Builds dist/ first unless
 * `--no-build`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { testEnv } from '../test/harness/platform';
import { assertBuildCurrent, entryArgs } from './launch';

const root = resolve(__dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const say = (line: string) => process.stdout.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Milliseconds from spawn to the worker's "polling" log line; the process is stopped then. */
function timeToPoll(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('worker polling task queue')) {
        const ms = performance.now() - started;
        child.kill('SIGTERM');
        child.once('exit', () => done(ms));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      if (!out.includes('worker polling task queue'))
        fail(new Error(`worker exited (${code}) before polling:\n${out.slice(-2000)}`));
    });
  });
}

async function main() {
  if (!process.argv.includes('--no-build')) {
    const built = spawnSync(process.execPath, [resolve(root, 'scripts/build.cjs')], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  assertBuildCurrent();
  await globalSetup();
  try {
    const env = testEnv();
    const common = {
      DATABASE_URL: env.databaseUrl,
      TEMPORAL_ADDRESS: env.temporalAddress,
      TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS!,
      TEMPORAL_TASK_QUEUE: `bench-start-${randomBytes(4).toString('hex')}`,
      KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: resolve(root, '.data', 'bench-worker-start'),
      LOG_LEVEL: 'info',
      ADDRESS_BOOK_CRON: 'off',
      RETENTION_CRON: 'off',
      KEY_ROTATION_PERIOD: 'off',
      // Nothing is called at start: a network address that answers nothing is enough.
      CLIENT_ID: 'bench',
      CLIENT_SECRET: 'bench',
      AUTH_URL: 'http://127.0.0.1:9',
      BASE_URL: 'http://127.0.0.1:9',
      AUDIENCE: 'http://127.0.0.1:9',
      BASEURL_PII: 'http://127.0.0.1:9/pii',
      AUDIENCE_PII: 'http://127.0.0.1:9/pii',
    };
    const modes = {
      source: [resolve(root, 'node_modules/tsx/dist/cli.mjs'), resolve(root, 'workers/main.ts')],
      compiled: entryArgs('workers/main.ts', 'compiled'),
    };
    const times: Record<keyof typeof modes, number[]> = { source: [], compiled: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const mode of ['source', 'compiled'] as const) {
        const ms = await timeToPoll(modes[mode], common);
        times[mode].push(ms);
        say(`run ${i + 1} ${mode.padEnd(8)} ${ms.toFixed(0)} ms`);
      }
    }
    const [s, c] = [median(times.source), median(times.compiled)];
    say(
      `\nworker start → polling, median of ${RUNS}: from source (tsx, bundling at start) ${s.toFixed(0)} ms; compiled with the prebuilt bundle ${c.toFixed(0)} ms; ratio compiled/source ${(c / s).toFixed(2)}×`,
    );
  } finally {
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
