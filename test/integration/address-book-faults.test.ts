import type { ReconcileReport } from '../../address-book/types';
import { followReconcile, startReconcile } from '../../client/cli/addresses';
import { addressBookReconcile } from '../../workflows/address-book-reconcile';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { addressBookTestSettings, evm, networkBook } from '../harness/address-book';

jest.setTimeout(240_000);

/**
 * A reconciliation against a network that fails: transient failures (5xx, answers lost after the change was made,
 * 429s) never end a run, and a run that ends for good half-way reports how far it got and leaves a book the next run
 * repairs.
 */
describe('address book: reconciliation against a failing network', () => {
  const group = groupSeed();
  const subP = randomDid();
  const subQ = randomDid();
  const subR = randomDid();
  for (const [did, name] of [
    [subP, 'Subsidiary P'],
    [subQ, 'Subsidiary Q'],
    [subR, 'Subsidiary R'],
  ] as const)
    group.seed.vasps.push({ did, name, parentDid: group.gateway });
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sandbox = await startSandbox(group.seed, { faults: true });
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB, subP, subQ, subR] },
      addressBook: addressBookTestSettings({ chunkRows: 40, chunksPerExecution: 100 }),
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sandbox?.close();
  });

  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers('admin', body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const faults = (config: Record<string, unknown>) => sandbox.setFaults(config);
  const injected = () => sandbox.injectedFaults();
  const rows = (vasp: string, from: number, to: number, salt: string) =>
    Array.from({ length: to - from }, (_, k) => ({
      asset: 'ETH',
      address: evm(from + k, salt),
      customerRef: `${salt}-${from + k}`,
      vaspDID: vasp,
    }));
  const reconcile = async (vasp: string, mode?: 'full'): Promise<{ workflowId: string; report: ReconcileReport }> => {
    const { workflowId } = await startReconcile(orch.target('operator'), vasp, mode);
    return {
      workflowId,
      report: await followReconcile(orch.target('viewer'), vasp, workflowId, { intervalMs: 50, progress: false }),
    };
  };
  /** The registry's addresses of a VASP against the network's: what is missing there and what is extra. */
  const difference = async (vasp: string) => {
    const { rows: wanted } = await orch.pool.query<{ address: string }>(
      'select address from address_registry where vasp_did = $1',
      [vasp],
    );
    const want = new Set(wanted.map((r) => r.address));
    const have = await networkBook(sandbox, vasp);
    return {
      missing: [...want].filter((a) => !have.has(a)).length,
      extra: [...have.keys()].filter((a) => !want.has(a)).length,
    };
  };

  it('rides out 5xx answers, answers lost after the change, and 429s inside each call: every activity completes on its first attempt', async () => {
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subP, 0, 300, 'f1') })).status).toBe(200);
    expect((await reconcile(subP)).report).toMatchObject({ status: 'succeeded', added: 300 });
    // Two of the three batches of removals, and additions in chunks.
    await call('DELETE', '/v1/addresses', {
      addresses: rows(subP, 0, 200, 'f1').map(({ asset, address }) => ({ asset, address })),
    });
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subP, 1000, 1200, 'f1') })).status).toBe(200);

    await faults({
      errors: { share: 0.3 },
      dropAfterCommit: { share: 0.4 },
      rateLimit: { share: 0.05, retryAfterSeconds: 1 },
    });
    try {
      const { workflowId, report } = await reconcile(subP, 'full');
      expect(report).toMatchObject({ status: 'succeeded', mode: 'full', removed: 200, added: 200 });
      const seen = await injected();
      // The faults are drawn per request, so how many of each kind a run meets varies (3 to 6 errors were seen); a run
      // that met fewer than three in all would prove little.
      expect((seen.errors ?? 0) + (seen.dropAfterCommit ?? 0) + (seen.rateLimit ?? 0)).toBeGreaterThanOrEqual(3);
      // Temporal records the attempt an activity completed on: a failure that ended an attempt would show as attempt 2.
      const history = await orch.client.workflow.getHandle(workflowId).fetchHistory();
      const attempts = (history.events ?? []).flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 1] : [],
      );
      expect(attempts.length).toBeGreaterThan(5);
      expect(attempts.every((a) => a === 1)).toBe(true);
    } finally {
      await faults({});
    }
    expect(await difference(subP)).toEqual({ missing: 0, extra: 0 });
  });

  it('a run refused for good half-way through its removals reports what it applied and what not; the next run repairs the book', async () => {
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subQ, 0, 400, 'f2') })).status).toBe(200);
    expect((await reconcile(subQ)).report).toMatchObject({ status: 'succeeded', added: 400 });
    // 300 removals: three DELETE batches (133, 133, 34 EVM addresses fit a request line); 60 additions, uploaded.
    await call('DELETE', '/v1/addresses', {
      addresses: rows(subQ, 0, 300, 'f2').map(({ asset, address }) => ({ asset, address })),
    });
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subQ, 2000, 2060, 'f2') })).status).toBe(200);

    // Each deletion's answer is held back after it was made, so the credential can lose the VASP between two batches.
    await faults({ latency: { share: 1, ms: 1500, afterHandler: true, routes: ['DELETE /v1/addresses'] } });
    const { workflowId } = await startReconcile(orch.target('operator'), subQ);
    try {
      await eventually(async () => ((await networkBook(sandbox, subQ)).size < 400 ? true : undefined), 60_000, 20);
      // The gateway's credential no longer covers the subsidiary: every further call for it is a 403.
      await sandbox.pool.query('update vasps set parent_did = null where did = $1', [subQ]);
      const ended = await followReconcile(orch.target('viewer'), subQ, workflowId, { intervalMs: 50, progress: false });
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatch(/removing.*403/);
    } finally {
      await sandbox.pool.query('update vasps set parent_did = $2 where did = $1', [subQ, group.gateway]);
      await faults({});
    }
    const reports = await call<{ reports: ReconcileReport[] }>('GET', `/v1/address-book/${subQ}/reports?limit=1`);
    const failed = reports.body.reports[0]!;
    expect(failed).toMatchObject({
      status: 'failed',
      removed: 133,
      added: 0,
      pending: { removals: 167, additions: 60 },
    });
    expect(failed.error).toMatch(/^removing: /);
    expect(await difference(subQ)).toEqual({ missing: 60, extra: 167 });

    const { report } = await reconcile(subQ);
    expect(report).toMatchObject({ status: 'succeeded', mode: 'full', removed: 167, added: 60 });
    expect(await difference(subQ)).toEqual({ missing: 0, extra: 0 });
  });

  it('a run terminated half-way releases its lock to the next scheduled run, which repairs the book', async () => {
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subR, 0, 300, 'f3') })).status).toBe(200);
    expect((await reconcile(subR)).report).toMatchObject({ status: 'succeeded', added: 300 });
    await call('DELETE', '/v1/addresses', {
      addresses: rows(subR, 0, 200, 'f3').map(({ asset, address }) => ({ asset, address })),
    });
    expect((await call('PUT', '/v1/addresses', { addresses: rows(subR, 3000, 3050, 'f3') })).status).toBe(200);

    await faults({ latency: { share: 1, ms: 1500, afterHandler: true, routes: ['DELETE /v1/addresses'] } });
    try {
      const { workflowId } = await startReconcile(orch.target('operator'), subR);
      await eventually(async () => ((await networkBook(sandbox, subR)).size < 300 ? true : undefined), 60_000, 20);
      // An operator terminates it in the Temporal UI: nothing of the workflow runs any more, its run lock stays.
      await orch.client.workflow.getHandle(workflowId).terminate('test: ended half-way through its removals');
    } finally {
      await faults({});
    }
    // The nightly schedule's start: not through the API (which would close the abandoned run itself).
    const report = await orch.client.workflow.execute(addressBookReconcile, {
      taskQueue: orch.taskQueue,
      workflowId: `address-book-reconcile-${subR}-scheduled`,
      args: [{ vaspDid: subR, trigger: 'schedule', mode: 'auto' }],
    });
    expect(report).toMatchObject({ status: 'succeeded', mode: 'full' });
    expect(await difference(subR)).toEqual({ missing: 0, extra: 0 });
    const reports = await call<{ reports: ReconcileReport[] }>('GET', `/v1/address-book/${subR}/reports?limit=2`);
    expect(reports.body.reports[1]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^abandoned: its workflow .* is TERMINATED/),
    });
  });
});
