import pino from 'pino';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { NetworkClient } from '../../network/client';
import { publishAfterWrite, pushPending } from '../../counterparties/push';
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

  /** The network answers every review with 503 (and nothing else) until the faults are switched off. */
  const reviewsFail = () => sb.setFaults({ errors: { share: 0, routes: { 'POST /tf/vasps/:vaspDID/review': 1 } } });
  const logLines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });

  it("a review's own push rides out a network down for a moment: tried again until the network takes it", async () => {
    const reviewed = g.external;
    await wantPush(pool, { vaspDid: g.subB, reviewedVaspDid: reviewed, reviewValue: 'MANUAL', note: 'ask' });
    await reviewsFail();
    // The network comes back 1.5 s later; the push keeps trying meanwhile.
    let refused = 0;
    const recovered = new Promise<void>((resolve) =>
      setTimeout(async () => {
        refused = (await sb.injectedFaults()).errors ?? 0;
        await sb.setFaults({});
        resolve();
      }, 1500),
    );
    await publishAfterWrite({ pool, network, logger }, reviewed, {
      maxElapsedMs: 20_000,
      initialDelayMs: 200,
      maxDelayMs: 1_000,
    });
    await recovered;
    expect(refused).toBeGreaterThanOrEqual(2);
    expect(await atNetwork(g.subB, reviewed)).toBe('MANUAL');
    expect(await unpushed(pool, 10, reviewed)).toEqual([]);
  });

  it('past its retry time, the push stays failed for the reconciliation and a warning says so', async () => {
    const reviewed = g.external;
    await wantPush(pool, { vaspDid: g.gateway, reviewedVaspDid: reviewed, reviewValue: 'BLOCKED', note: 'no' });
    await reviewsFail();
    logLines.length = 0;
    await publishAfterWrite({ pool, network, logger }, reviewed, {
      maxElapsedMs: 300,
      initialDelayMs: 50,
      maxDelayMs: 100,
    });
    await sb.setFaults({});
    expect(await unpushed(pool, 10, reviewed)).toMatchObject([{ state: 'failed', attempts: 1 }]);
    expect(logLines.map((l) => JSON.parse(l).msg as string)).toEqual([
      'counterparty reviews not pushed; the reconciliation sends them',
    ]);
  });

  it('a database failure while recording a sent push is not recorded as a network failure: the row stays pending', async () => {
    const reviewed = g.external;
    const push = { vaspDid: g.subA, reviewedVaspDid: reviewed, reviewValue: 'MANUAL' as const, note: 'db-fault' };
    await wantPush(pool, push);
    // Only this pair's row: the test before leaves the gateway's failed push of the same counterparty.
    const mine = async () => (await unpushed(pool, 10, reviewed)).filter((p) => p.vaspDid === g.subA);
    const [before] = await mine();
    // The database refuses this pair's "pushed" record (and nothing else) while the trigger is there.
    await pool.query(`create or replace function refuse_pushed_record() returns trigger language plpgsql as $$
      begin raise exception 'injected: recording refused'; end $$`);
    await pool.query(`create trigger refuse_pushed_record before update on counterparty_review_pushes for each row
      when (new.state = 'pushed' and new.vasp_did = '${g.subA}' and new.reviewed_vasp_did = '${reviewed}')
      execute function refuse_pushed_record()`);
    try {
      logLines.length = 0;
      await publishAfterWrite({ pool, network, logger }, reviewed, {
        maxElapsedMs: 300,
        initialDelayMs: 50,
        maxDelayMs: 100,
      });
      // The network took it; our record says nothing was tried, so the next pass sends it again.
      expect(await atNetwork(g.subA, reviewed)).toBe('MANUAL');
      expect(await mine()).toEqual([
        expect.objectContaining({ state: 'pending', attempts: before!.attempts, lastError: before!.lastError }),
      ]);
      const warnings = logLines.map((l) => JSON.parse(l) as { msg: string; err?: { message?: string } });
      expect(warnings).toMatchObject([
        {
          msg: 'pushing counterparty reviews failed; the reconciliation retries',
          err: { message: expect.stringMatching(/recording refused/) },
        },
      ]);
    } finally {
      await pool.query('drop trigger if exists refuse_pushed_record on counterparty_review_pushes');
      await pool.query('drop function if exists refuse_pushed_record()');
    }
    expect(await pushPending({ pool, network }, { reviewedVaspDid: reviewed })).toMatchObject({ failed: 0 });
    expect(await mine()).toEqual([]);
  });
});
