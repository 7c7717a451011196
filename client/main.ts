import { loadConfig } from '../lib/config';
import { runMain } from '../lib/run-main';
import { startApi } from './api-process';

runMain('api', (log) => startApi(loadConfig(), log));
