import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { NetworkClient } from '../../network/client';
import { pushPending, pushWithRetries } from '../../counterparties/push';
import { unpushed, wantPush } from '../../counterparties/store';
import { groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

/**
 * Found by CI in counterparties-api.test.ts: two reviews written back to back each start a push of the same pair,
 * and the older value's request can reach the network after the newer one's. The network must end with the newer.
 */
describe('counterparty review pushes: an older push that lands last is sent again; a failed push is tried again', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let pool: Pool;
  let network: NetworkClient;

  beforeAll(async () => {
    sb = await startSandbox(g.seed, { faults: true });
    pool = createPool(process.env.TEST_DATABASE_URL!, 'orchestrator');
    network = new NetworkClient(sb.networkConfig(g.gatewayUser));
  });
  afterAll(async () => {
    await pool?.end();
    await sb?.close();
  });

  /** `vaspDid`'s review of `reviewed` at the sandbox, read with its directory filter. */
  const atNetwork = async (vaspDid: string, reviewed: string): Promise<string | undefined> => {
    const token = await sb.token(g.gatewayUser);
    for (const reviewValue of ['TRUSTED', 'BLOCKED', 'MANUAL']) {
      const q = new URLSearchParams({ reviewedByVaspDID: vaspDid, reviewValue, listingType: 'all' });
      const r = await fetch(`${sb.url}/tf/simple/vasps?${q}`, { headers: { authorization: `Bearer ${token}` } });
      const { vasps } = (await r.json()) as { vasps: { did: string }[] };
      if (vasps.some((v) => v.did === reviewed)) return reviewValue;
    }
    return undefined;
  };

  it('ends with the newer review at the network and recorded as pushed', async () => {
    const reviewed = g.external;
    const older = { vaspDid: g.subA, reviewedVaspDid: reviewed, reviewValue: 'TRUSTED' as const, note: 'group' };
    await wantPush(pool, older);

    // The older value's request waits 3 s at the network before it is handled.
    await sb.setFaults({ latency: { share: 1, ms: 3000, routes: ['POST /tf/vasps/:vaspDID/review'] } });
    const slow = pushPending({ pool, network }, { reviewedVaspDid: reviewed });
    await new Promise((r) => setTimeout(r, 300));
    await sb.setFaults({});

    // Meanwhile a newer review is written and pushed at once.
    await wantPush(pool, { ...older, reviewValue: 'BLOCKED', note: 'override' });
    expect(await pushPending({ pool, network }, { reviewedVaspDid: reviewed })).toEqual({ pushed: 1, failed: 0 });
    expect(await atNetwork(g.subA, reviewed)).toBe('BLOCKED');

    // The older request lands after it; its pass finds the row changed and sends the newer value again.
    await slow;
    expect(await atNetwork(g.subA, reviewed)).toBe('BLOCKED');
    expect(await unpushed(pool, 10, reviewed)).toEqual([]);
  });

  it('tries a failed push again after a delay, until the network takes it', async () => {
    const reviewed = g.external;
    await wantPush(pool, { vaspDid: g.subB, reviewedVaspDid: reviewed, reviewValue: 'MANUAL', note: 'ask' });
    await sb.setFaults({ errors: { share: 1, routes: { 'POST /tf/vasps/:vaspDID/review': 1 } } });
    const waits: number[] = [];
    const outcome = await pushWithRetries({ pool, network }, reviewed, {
      delaysMs: [10, 20, 30],
      // The network comes back during the second wait.
      wait: async (ms) => {
        waits.push(ms);
        if (waits.length === 2) await sb.setFaults({});
      },
    });
    expect(waits).toEqual([10, 20]);
    expect(outcome).toEqual({ pushed: 1, failed: 0 });
    expect(await atNetwork(g.subB, reviewed)).toBe('MANUAL');
    expect(await unpushed(pool, 10, reviewed)).toEqual([]);
  });

  it('gives up after the last delay and leaves the push failed for the reconciliation', async () => {
    const reviewed = g.external;
    await wantPush(pool, { vaspDid: g.gateway, reviewedVaspDid: reviewed, reviewValue: 'BLOCKED', note: 'no' });
    await sb.setFaults({ errors: { share: 1, routes: { 'POST /tf/vasps/:vaspDID/review': 1 } } });
    const waits: number[] = [];
    const outcome = await pushWithRetries({ pool, network }, reviewed, {
      delaysMs: [5, 5],
      wait: async (ms) => void waits.push(ms),
    });
    await sb.setFaults({});
    expect(waits).toEqual([5, 5]);
    expect(outcome).toEqual({ pushed: 0, failed: 1 });
    expect(await unpushed(pool, 10, reviewed)).toMatchObject([{ state: 'failed', attempts: 3 }]);
  });
});
