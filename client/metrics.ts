import type { Pool } from 'pg';
import type { PlatformConfig } from '../config';
import { registry, setKeyAgeSource, setReviewQueueSource } from '../lib/metrics/registry';
import { startMetricsListenerIfFree, type MetricsListener } from '../lib/metrics/server';
import { reviewQueueSnapshot } from '../transfer-view/store';
import { activeKeyAges } from '../keys/key-ages-store';

/**
 * The API process's /metrics (METRICS_PORT): the counters every part of the process moves, and the gauges read from
 * the database at each scrape (the review queue, the group's key ages). Nothing when METRICS_PORT=off.
 */
export async function startApiMetrics(
  config: PlatformConfig,
  pool: Pool,
  warn: (message: string) => void,
): Promise<MetricsListener | undefined> {
  const { metricsHost, apiMetricsPort } = config.observability;
  if (apiMetricsPort === undefined) return undefined;
  const groupVasps = [config.group.gatewayDid, ...config.group.subsidiaryDids].filter((d): d is string => !!d);
  setReviewQueueSource(() => reviewQueueSnapshot(pool));
  setKeyAgeSource(() => activeKeyAges(pool, groupVasps));
  return startMetricsListenerIfFree(registry, metricsHost, apiMetricsPort, warn);
}
