import { Agent, get, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { portIsFree, startMetricsListener, startMetricsListenerIfFree } from '../../../lib/metrics/server';

describe('metrics listeners never stop a process', () => {
  it('a port another process holds leaves the process without /metrics, said once; a free one serves', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const port = (squatter.address() as AddressInfo).port;
    expect(await portIsFree('127.0.0.1', port)).toBe(false);
    const warnings: string[] = [];
    expect(
      await startMetricsListenerIfFree(new Registry(), '127.0.0.1', port, (m) => warnings.push(m)),
    ).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining(`127.0.0.1:${port}`)]);
    await new Promise<void>((r) => squatter.close(() => r()));
    expect(await portIsFree('127.0.0.1', port)).toBe(true);
    const served = await startMetricsListenerIfFree(new Registry(), '127.0.0.1', port, (m) => warnings.push(m));
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await served!.close();
  });
});

describe('a scraper keeps its connection', () => {
  /** One GET over `agent`, and whether it went over a connection an earlier request had opened. */
  const scrape = (port: number, agent: Agent) =>
    new Promise<{ status?: number; reused: boolean }>((resolve, reject) => {
      const req = get({ host: '127.0.0.1', port, path: '/metrics', agent }, (res: IncomingMessage) =>
        res.resume().on('end', () => resolve({ status: res.statusCode, reused: req.reusedSocket })),
      );
      req.on('error', reject);
    });

  it("reuses it after a pause longer than Node's default keep-alive (5 s), and close() ends it at once", async () => {
    const listener = await startMetricsListener(new Registry(), '127.0.0.1', 0);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let closed = false;
    try {
      expect(await scrape(listener.port, agent)).toEqual({ status: 200, reused: false });
      await new Promise((r) => setTimeout(r, 6_000));
      expect(await scrape(listener.port, agent)).toEqual({ status: 200, reused: true });
      const started = Date.now();
      await listener.close();
      closed = true;
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
      if (!closed) await listener.close();
    }
  }, 20_000);
});
