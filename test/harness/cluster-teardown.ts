import { clusterGlobalTeardown } from './cluster';

export default clusterGlobalTeardown;
