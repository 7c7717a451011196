import { loadConfig } from '../config';
import { runMain } from '../config/run-main';
import { startWorker } from './worker-process';

runMain('worker', (log) => startWorker(loadConfig(), log));
