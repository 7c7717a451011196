import { loadConfig } from '../config';
import { runMain } from '../config/run-main';
import { startWorker } from './worker-process';
import { installTemporalRuntime } from './telemetry';

runMain('worker', async (log) => {
  const config = loadConfig();
  await installTemporalRuntime(config.observability, log);
  return startWorker(config, log);
});
