import { useClusterRun } from './cluster';

useClusterRun();
