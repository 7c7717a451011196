import { rmSync } from 'node:fs';
import { dropDatabase } from '../../db/database-url';
import { DEV_SERVER_RUN, type PreparedRun, type RunKeys } from './global-setup';

/** Stops what `prepareRun` started for one suite: its Temporal, its database, its workflow bundle. */
export async function teardownRun(keys: RunKeys): Promise<void> {
  const run = (globalThis as Record<string, unknown>)[keys.globalKey] as PreparedRun | undefined;
  if (!run) return;
  await run.temporal.teardown();
  await dropDatabase(run.server.serverUrl, new URL(run.url).pathname.slice(1));
  await run.server.stop();
  rmSync(run.bundlePath, { force: true });
}

export default () => teardownRun(DEV_SERVER_RUN);
