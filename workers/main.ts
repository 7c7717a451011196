import { loadConfig } from '../lib/config';
import { runMain } from '../lib/run-main';
import { startWorker } from './worker-process';

runMain('worker', (log) => startWorker(loadConfig(), log));
