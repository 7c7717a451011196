import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * How long an idle scrape connection stays open: over Prometheus's default scrape interval (1 minute) and the one
 * ops/prometheus/prometheus.yml sets (test/unit/ops-files.test.ts holds that).
 */
export const METRICS_KEEP_ALIVE_MS = 90_000;

/**
 * The process's `/metrics` on a listener of its own (loopback by default), apart from the API so that scrapes need no
 * credential and never share the API's rate limits. Port 0 takes a free port (several workers on one machine).
 */
export async function startMetricsListener(registry: Registry, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      () => res.writeHead(500).end('metrics unavailable\n'),
    );
  });
  // A scraper keeps its connection between scrapes (Prometheus does): held longer than its interval, it saves each
  // scrape a connection's accept and set-up (Node's default, 5 s, closes it before any usual interval).
  server.keepAliveTimeout = METRICS_KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * startMetricsListener, except that a port it cannot take (another process holds it) leaves the process running
 * without /metrics, said in `warn`: metrics are for watching transfers, never a reason to stop processing them (a
 * worker restarted by its supervisor must come back even when something squats on its metrics port).
 */
export async function startMetricsListenerIfFree(
  registry: Registry,
  host: string,
  port: number,
  warn: (message: string) => void,
): Promise<MetricsListener | undefined> {
  try {
    return await startMetricsListener(registry, host, port);
  } catch (e) {
    warn(`/metrics is not served: ${host}:${port}: ${(e as Error).message}`);
    return undefined;
  }
}

/** Whether a TCP port can be listened on now (for listeners this process does not open itself). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}
