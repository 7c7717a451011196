/**
 * npm run bench:temporal-floor — the ceiling this machine puts on any Temporal-based flow, on the stack the project's
 * benchmarks use (the Temporal CLI dev server, the project's encrypting data converter, one worker): workflows that do
 * nothing but one local activity, started at BENCH_RATE per second (default 100) for BENCH_SECONDS (default 10), each
 * awaited to its result, once with a plain start and once with eager start. See bench/floor.ts.
 */
import { cpus } from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { testEnv } from '../test/harness/platform';
import { describeFloor, runFloor } from './floor';

const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await globalSetup();
  const env = testEnv();
  try {
    process.stdout.write(`temporal floor, ${cpus().length} cores\n`);
    for (const eager of [false, true]) {
      const f = await runFloor({
        address: env.temporalAddress,
        keyring: env.keyring,
        rate: RATE,
        seconds: SECONDS,
        eager,
      });
      process.stdout.write(`${describeFloor(f)}\n`);
    }
  } finally {
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  },
);
