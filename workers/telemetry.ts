import { Runtime } from '@temporalio/worker';
import type { ObservabilityConfig } from '../config';
import type { Logger } from '../lib/logger';
import { portIsFree } from '../lib/metrics/server';

/**
 * The Temporal SDK's own worker metrics (pollers, slots, task latencies) on TEMPORAL_SDK_METRICS_PORT. The SDK's
 * runtime is installed once per process, before its first connection, so this runs first in a worker's entry point;
 * its Prometheus listener is the runtime's, beside the process's own /metrics (WORKER_METRICS_PORT).
 */
export async function installTemporalRuntime(config: ObservabilityConfig, log: Logger): Promise<void> {
  if (config.temporalSdkMetricsPort === undefined) return;
  const bindAddress = `${config.metricsHost}:${config.temporalSdkMetricsPort}`;
  // A port held by another process would stop the runtime, and with it the worker: it runs without these metrics.
  if (config.temporalSdkMetricsPort !== 0 && !(await portIsFree(config.metricsHost, config.temporalSdkMetricsPort))) {
    log.warn(`Temporal SDK metrics are not served: ${bindAddress} is in use (TEMPORAL_SDK_METRICS_PORT)`);
    return;
  }
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
  log.info(`Temporal SDK metrics at http://${bindAddress}/metrics`);
}
