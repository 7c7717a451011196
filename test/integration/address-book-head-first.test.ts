import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { addressBookActivities } from '../../activities/address-book';
import { NetworkClient } from '../../network/client';
import { followReconcile, startReconcile } from '../../client/cli/addresses';
import type { AddressBookConfig } from '../../address-book/config';
import { createLogger } from '../../lib/logger';
import {
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { addressBookTestSettings, evm, networkBook } from '../harness/address-book';
import { scheduledActivities } from '../harness/workflow-env';

jest.setTimeout(180_000);

/** 50-row chunks, a head of two chunks (100 rows): a few hundred addresses give a head and a rest. */
const settings = (over: Partial<AddressBookConfig> = {}) =>
  addressBookTestSettings({ chunkRows: 50, headChunks: 2, chunksPerExecution: 20, ...over });

/**
 * A first sync (empty book at the network) computes the head of its delta first and uploads it while the rest of the
 * diff runs (abComputeHead, then abComputeDelta beside the head's uploads).
 */
describe('address book: a first sync uploads its head while the rest of the diff runs', () => {
  const group = groupSeed();
  const subG = randomDid();
  const subH = randomDid();
  const subI = randomDid();
  for (const [did, name] of [
    [subG, 'Subsidiary G'],
    [subH, 'Subsidiary H'],
    [subI, 'Subsidiary I'],
  ] as const) {
    group.seed.vasps.push({ did, name, parentDid: group.gateway });
  }
  const groupConfig = { gatewayDid: group.gateway, subsidiaryDids: [group.subA, subG, subH, subI] };
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sandbox = await startSandbox(group.seed);
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: groupConfig,
      addressBook: settings(),
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sandbox?.close();
  });

  const put = async (addresses: unknown[]) => {
    const r = await fetch(`${orch.apiUrl}/v1/addresses`, {
      method: 'PUT',
      headers: orch.headers('operator', { 'content-type': 'application/json' }),
      body: JSON.stringify({ addresses }),
    });
    expect(r.status).toBe(200);
  };
  const atNetwork = (vasp: string) => networkBook(sandbox, vasp);
  const uploadNames = async (vasp: string) =>
    (
      await sandbox.pool.query<{ file_name: string }>(
        'select file_name from address_uploads where vasp_did = $1 order by received_at',
        [vasp],
      )
    ).rows.map((r) => r.file_name);
  /** What the registry wants at the network: each network address (tag masters included), the untagged entry first. */
  const desired = async (vasp: string) => {
    const { rows } = await orch.pool.query<{ na: string; customer_ref: string }>(
      `select distinct on (na) na, customer_ref from (
         select network_address collate "C" as na, asset, customer_ref, 0 as pri from address_registry where vasp_did = $1
         union all
         select address collate "C", asset, customer_ref, 1 from address_registry where vasp_did = $1 and tag <> ''
       ) x order by na, pri, asset, customer_ref`,
      [vasp],
    );
    return new Map(rows.map((r) => [r.na, r.customer_ref]));
  };
  const reconcile = async (vasp: string, o = orch) => {
    const { workflowId } = await startReconcile(o.target('operator'), vasp);
    const report = await followReconcile(o.target('viewer'), vasp, workflowId, { intervalMs: 50, progress: false });
    return { report, workflowId };
  };
  /** Tagged entries on both sides of the head's end: `0m…` sorts before `0x…`, `rM…` after. */
  const registryRows = (vasp: string, salt: string, n: number) => [
    ...Array.from({ length: n }, (_, i) => ({
      asset: 'ETH',
      address: evm(i, salt),
      customerRef: `${salt}-${i}`,
      vaspDID: vasp,
    })),
    ...[1, 2, 3].flatMap((m) =>
      [101, 102].map((t) => ({
        asset: 'XRP',
        address: `0m${salt}${m}:${t}`,
        customerRef: `${salt}-m${m}-${t}`,
        vaspDID: vasp,
      })),
    ),
    ...[1, 2].flatMap((m) =>
      [201, 202].map((t) => ({
        asset: 'XRP',
        address: `rM${salt}${m}:${t}`,
        customerRef: `${salt}-r${m}-${t}`,
        vaspDID: vasp,
      })),
    ),
  ];

  it('ends equal to the registry, head and rest uploaded once each, chunks in order, then nothing to do', async () => {
    await put(registryRows(subG, 'a7', 300));
    const want = await desired(subG);
    // 300 ETH + 6 tagged under 3 masters + 4 tagged under 2 masters.
    expect(want.size).toBe(315);
    const { report, workflowId } = await reconcile(subG);
    expect(report).toMatchObject({
      status: 'succeeded',
      mode: 'full',
      method: 'upload',
      desired: 315,
      added: 315,
      rejected: 0,
      chunks: 7,
    });
    expect(await atNetwork(subG)).toEqual(want);
    const names = await uploadNames(subG);
    expect(names.map((n) => n.slice(-9))).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((i) => `${String(i).padStart(5, '0')}.csv`),
    );
    // The head was its own step, before the rest.
    const history = await orch.client.workflow.getHandle(workflowId).fetchHistory();
    const activities = scheduledActivities(history.events ?? []);
    expect(activities.indexOf('abComputeHead')).toBeGreaterThan(-1);
    expect(activities.indexOf('abComputeHead')).toBeLessThan(activities.indexOf('abComputeDelta'));
    // The chunks: rows 1–100 are the head's two, the rest continues the numbering.
    const { rows: chunks } = await orch.pool.query<{
      chunk_no: number;
      first_seq: string;
      last_seq: string;
      state: string;
      attempts: number;
    }>(
      'select chunk_no, first_seq, last_seq, state, attempts from address_book_chunks where run_id = $1 order by chunk_no',
      [report.runId],
    );
    expect(chunks.map((c) => [Number(c.first_seq), Number(c.last_seq)])).toEqual([
      [1, 50],
      [51, 100],
      [101, 150],
      [151, 200],
      [201, 250],
      [251, 300],
      [301, 315],
    ]);
    expect(chunks.every((c) => c.state === 'uploaded' && c.attempts === 1)).toBe(true);

    const again = await reconcile(subG);
    expect(again.report).toMatchObject({ status: 'succeeded', mode: 'incremental', method: 'none', desired: 315 });
    expect(await uploadNames(subG)).toHaveLength(7);
  });

  it('a desired set no larger than the head is the whole delta', async () => {
    await put(registryRows(subI, 'c9', 60).slice(0, 80));
    const { report } = await reconcile(subI);
    expect(report).toMatchObject({ status: 'succeeded', method: 'upload', desired: 75, added: 75, chunks: 2 });
    expect(await atNetwork(subI)).toEqual(await desired(subI));
  });

  it('registry changes between the head and the rest, and a rest interrupted mid-way: the next incremental run brings the network in line', async () => {
    await put(registryRows(subH, 'b8', 300));
    const cfg = settings();
    const network = new NetworkClient(sandbox.networkConfig(group.gatewayUser));
    const logger = createLogger('test', 'warn');
    const acts = addressBookActivities({ pool: orch.pool, network, logger, addressBook: cfg });
    // The same activities whose rest fails once just before it would commit (a worker dying at the end of the diff).
    let failed = 0;
    const failingPool = new Proxy(orch.pool, {
      get(target, prop) {
        if (prop === 'connect') {
          return async () => {
            const c: PoolClient = await target.connect();
            const query = c.query.bind(c) as (...a: unknown[]) => unknown;
            (c as unknown as { query: unknown }).query = (text: unknown, ...rest: unknown[]) => {
              if (typeof text === 'string' && /attach partition \S+_rest/.test(text) && failed++ === 0) {
                return Promise.reject(new Error('worker stopped'));
              }
              return query(text, ...rest);
            };
            const release = c.release.bind(c);
            c.release = (err?: Error | boolean) => {
              (c as unknown as { query: unknown }).query = query;
              return release(err);
            };
            return c;
          };
        }
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as Pool;
    const crashing = addressBookActivities({ pool: failingPool, network, logger, addressBook: cfg });

    const runId = randomUUID();
    const timeouts = { timeoutMs: 30_000, pollMs: 50 };
    const begun = await acts.abBeginRun({
      runId,
      vaspDid: subH,
      workflowId: `test-${runId}`,
      trigger: 'test',
      mode: 'full',
    });
    expect(begun).toMatchObject({ started: true, mode: 'full' });
    expect(await acts.abListNetwork({ runId, vaspDid: subH })).toMatchObject({ total: 0, rows: 0 });
    const head = await acts.abComputeHead({ runId, vaspDid: subH });
    expect(head).toEqual({ complete: false, headRows: 100, headChunks: 2 });
    if (head.complete) return;
    // Computing the head again returns the committed one.
    expect(await acts.abComputeHead({ runId, vaspDid: subH })).toEqual(head);
    const { rows: w1 } = await orch.pool.query<{ watermark: string }>(
      'select watermark from address_book_runs where run_id = $1',
      [runId],
    );
    const { rows: headRows } = await orch.pool.query<{ address: string }>(
      'select address from address_book_delta where run_id = $1 order by seq',
      [runId],
    );
    expect(headRows).toHaveLength(100);
    // The head holds the first 100 network addresses in order: the `0m…` masters and tags, then `0x…`.
    expect(headRows.slice(0, 9).map((r) => r.address)).toEqual([
      '0mb81',
      '0mb81:101',
      '0mb81:102',
      '0mb82',
      '0mb82:101',
      '0mb82:102',
      '0mb83',
      '0mb83:101',
      '0mb83:102',
    ]);

    // The head uploads; meanwhile the registry changes on both sides of the head's end.
    for (let chunkNo = 1; chunkNo <= head.headChunks; chunkNo++) {
      expect(await acts.abUploadChunk({ runId, vaspDid: subH, chunkNo, baseCount: 0, ...timeouts })).toMatchObject({
        rows: 50,
        sent: true,
      });
    }
    const headAddr = (i: number) => evm(i, 'b8'); // ETH 0–90 are in the head (after the 9 tagged rows), 91+ in the rest
    await put([
      { asset: 'ETH', address: headAddr(5), customerRef: 'b8-5-changed', vaspDID: subH }, // updated in the head's range
      { asset: 'ETH', address: evm(5000, 'b8').replace(/^0xb8/, '0xb7'), customerRef: 'new-in-head', vaspDID: subH }, // new, sorts into the head
      { asset: 'ETH', address: headAddr(200), customerRef: 'b8-200-changed', vaspDID: subH }, // updated in the rest's range
      { asset: 'ETH', address: evm(6000, 'b8'), customerRef: 'new-in-rest', vaspDID: subH }, // new, in the rest's range
    ]);
    await fetch(`${orch.apiUrl}/v1/addresses`, {
      method: 'DELETE',
      headers: orch.headers('operator', { 'content-type': 'application/json' }),
      body: JSON.stringify({
        addresses: [
          { asset: 'ETH', address: headAddr(7) },
          { asset: 'XRP', address: '0mb81:101' },
          { asset: 'ETH', address: headAddr(250) },
        ],
      }),
    });

    // The rest's first attempt dies before it commits: nothing of it stays, the head and its uploads are untouched.
    await expect(crashing.abComputeDelta({ runId, vaspDid: subH })).rejects.toThrow('worker stopped');
    const { rows: afterCrash } = await orch.pool.query<{ chunk_no: number; state: string }>(
      'select chunk_no, state from address_book_chunks where run_id = $1 order by chunk_no',
      [runId],
    );
    expect(afterCrash).toEqual([
      { chunk_no: 1, state: 'uploaded' },
      { chunk_no: 2, state: 'uploaded' },
    ]);
    const delta = await acts.abComputeDelta({ runId, vaspDid: subH });
    // 315 desired at W1; the rest sees its range as of now: one new row, one deleted.
    expect(delta).toMatchObject({
      method: 'upload',
      networkBefore: 0,
      toAdd: 315,
      toRemove: 0,
      toUpdate: 0,
      chunks: 7,
    });
    expect(await acts.abComputeDelta({ runId, vaspDid: subH })).toEqual(delta);
    const { rows: run } = await orch.pool.query<{ watermark: string }>(
      'select watermark from address_book_runs where run_id = $1',
      [runId],
    );
    expect(run[0]!.watermark).toBe(w1[0]!.watermark);

    for (let chunkNo = 1; chunkNo <= delta.chunks; chunkNo++) {
      expect(await acts.abUploadChunk({ runId, vaspDid: subH, chunkNo, baseCount: 0, ...timeouts })).toMatchObject({
        sent: chunkNo > 2,
      });
    }
    expect(await uploadNames(subH)).toHaveLength(7);
    await acts.abBuildMirror({ runId });
    const waited = await acts.abAwaitNetworkCount({
      runId,
      vaspDid: subH,
      from: 0,
      expected: 315,
      direction: 'up',
      ...timeouts,
      settleMs: 1500,
    });
    expect(waited).toMatchObject({ reached: true, count: 315 });
    await acts.abVerify({ runId, vaspDid: subH, countReached: true, verify: 'count' });
    expect(await acts.abFinishRun({ runId, status: 'succeeded', verifiedBy: 'count', phases: {} })).toMatchObject({
      status: 'succeeded',
      added: 315,
    });

    // The network holds the head as of W1 and the rest as of the rest's snapshot.
    const first = await atNetwork(subH);
    expect(first.get(headAddr(5))).toBe('b8-5');
    expect(first.has(headAddr(7))).toBe(true);
    expect(first.has('0mb81:101')).toBe(true);
    expect(first.get(headAddr(200))).toBe('b8-200-changed');
    expect(first.has(headAddr(250))).toBe(false);
    expect(first.has(evm(6000, 'b8'))).toBe(true);

    // The next run is incremental from W1 and fixes the head's range.
    const { report } = await reconcile(subH);
    expect(report).toMatchObject({ status: 'succeeded', mode: 'incremental', method: 'register', rejected: 0 });
    expect(await atNetwork(subH)).toEqual(await desired(subH));
  });
});
