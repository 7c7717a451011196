import { loadConfig } from '../config';
import { runMain } from '../config/run-main';
import { startWorker } from './worker-process';
import { installTemporalRuntime } from './telemetry';

runMain('worker', (log) => {
  const config = loadConfig();
  installTemporalRuntime(config.observability, log);
  return startWorker(config, log);
});
