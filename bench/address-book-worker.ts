/**
 * The worker process of `npm run bench:address-book` (bench/address-book.ts forks it): the address-book activities and
 * the workflow bundle the tests use, on the bench's task queue, reporting its memory when asked. It loads nothing else,
 * so its RSS is the address-book worker's.
 */
import { NativeConnection } from '@temporalio/worker';
import { addressBookActivities } from '../activities/address-book';
import { withFailureMapping } from '../activities/failures';
import { NetworkClient } from '../network/client';
import { createPool } from '../db/pool';
import { loadAddressBookConfig } from '../address-book/config';
import type { NetworkConfig } from '../config';
import { createLogger } from '../lib/logger';
import { parseCodecKeys } from '../lib/temporal/codec-keys';
import { createWorker } from '../workers/worker';

export type ToWorker = { type: 'mark' } | { type: 'stop' };
export type Memory = ReturnType<typeof process.memoryUsage>;
export type FromWorker =
  { type: 'ready'; memory: Memory } | { type: 'peak'; rss: number; maxRss: number; atPeak: Memory };

/** What the test harness's global setup leaves in the environment (as test/harness/platform.ts reads it). */
function testEnv() {
  return {
    temporalAddress: process.env.TEST_TEMPORAL_ADDRESS!,
    databaseUrl: process.env.TEST_DATABASE_URL!,
    workflowBundle: process.env.TEST_WORKFLOW_BUNDLE!,
    keyring: parseCodecKeys(process.env.TEST_CODEC_KEYS!),
  };
}

/** The worker process: the address-book activities and the workflow bundle, reporting its RSS peak when asked. */
async function workerMain(): Promise<void> {
  const env = testEnv();
  const network = JSON.parse(process.env.BENCH_NETWORK!) as NetworkConfig;
  const pool = createPool(env.databaseUrl, 'orchestrator');
  const settings = {
    ...loadAddressBookConfig(process.env),
    pollIntervalMs: Number(process.env.ADDRESS_BOOK_POLL_INTERVAL_MS ?? 100),
  };
  const activities = withFailureMapping(
    addressBookActivities({
      pool,
      network: new NetworkClient(network),
      logger: createLogger('bench-worker', 'warn'),
      addressBook: settings,
    }),
  );
  const connection = await NativeConnection.connect({ address: env.temporalAddress });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue: process.env.BENCH_TASK_QUEUE!,
    keyring: env.keyring,
    activities: activities as never,
    workflowBundlePath: env.workflowBundle,
  });
  let peak = 0;
  let atPeak = process.memoryUsage();
  const sample = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak) {
      peak = m.rss;
      atPeak = m;
    }
  }, 50);
  const running = worker.run();
  process.on('message', async (m: ToWorker) => {
    if (m.type === 'mark') {
      process.send!({
        type: 'peak',
        rss: peak,
        maxRss: process.resourceUsage().maxRSS * 1024,
        atPeak,
      } satisfies FromWorker);
      peak = process.memoryUsage().rss;
      atPeak = process.memoryUsage();
    } else {
      clearInterval(sample);
      worker.shutdown();
      await running;
      await connection.close();
      await pool.end();
      process.exit(0);
    }
  });
  process.send!({ type: 'ready', memory: process.memoryUsage() } satisfies FromWorker);
}

workerMain().catch((e) => {
  process.stderr.write(`bench worker: ${(e as Error).stack}\n`);
  process.exit(1);
});
