import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { portIsFree, startMetricsListenerIfFree } from '../../../lib/metrics/server';

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
