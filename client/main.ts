import { loadConfig } from '../config';
import { runMain } from '../config/run-main';
import { startApi } from './api-process';

runMain('api', (log) => startApi(loadConfig(), log));
