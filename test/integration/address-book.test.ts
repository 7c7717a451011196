import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkClient } from '../../network/client';
import { ensureAddressBookSchedules } from '../../client/address-book-schedules';
import { followReconcile, importAddresses, startReconcile } from '../../client/cli/addresses';
import type { AddressBookConfig } from '../../address-book/config';
import type { ReconcileProgress, ReconcileReport } from '../../address-book/types';
import { workflowIds } from '../../lib/temporal/workflow-ids';
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

jest.setTimeout(180_000);

/** Small chunks, few per execution: every path of a run in a few seconds. */
const settings = (over: Partial<AddressBookConfig> = {}) =>
  addressBookTestSettings({ chunkRows: 40, chunksPerExecution: 2, ...over });

describe('address book: registry, reconciliation with the network, schedules', () => {
  const group = groupSeed();
  // Two more subsidiaries, so each scenario starts from an empty book at the network.
  const subC = randomDid();
  const subD = randomDid();
  const subE = randomDid();
  const subF = randomDid();
  for (const [did, name] of [
    [subC, 'Subsidiary C'],
    [subD, 'Subsidiary D'],
    [subE, 'Subsidiary E'],
    [subF, 'Subsidiary F'],
  ] as const) {
    group.seed.vasps.push({ did, name, parentDid: group.gateway });
  }
  const groupConfig = { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB, subC, subD, subE, subF] };
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;
  const dir = mkdtempSync(join(tmpdir(), 'address-book-test-'));

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

  // Every orchestrator of the run shares the database, so the first one's API keys open all of them.
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    base = orch.apiUrl,
  ) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: orch.headers('admin', body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  type ErrorBody = { error: { type: string; message: string; field?: string; index?: number } };

  /** What the network holds for a VASP, read from the sandbox's own tables: address → customerRef. */
  const atNetwork = (vasp: string, sb = sandbox) => networkBook(sb, vasp);
  const uploadsAt = async (vasp: string, sb = sandbox) =>
    (
      await sb.pool.query<{ file_name: string; size_bytes: string; status: string }>(
        'select file_name, size_bytes, status from address_uploads where vasp_did = $1 order by received_at',
        [vasp],
      )
    ).rows;

  const reconcile = async (
    vasp: string,
    o = orch,
    onProgress?: (p: ReconcileProgress) => void,
  ): Promise<ReconcileReport> => {
    const { workflowId } = await startReconcile(o.target('operator'), vasp);
    return followReconcile(o.target('viewer'), vasp, workflowId, { intervalMs: 50, progress: false, onProgress });
  };
  const put = (addresses: unknown[]) => call('PUT', '/v1/addresses', { addresses });

  it('validates registry writes all or nothing, naming the field and the index', async () => {
    const good = { asset: 'ETH', address: evm(1, 'aa'), customerRef: 'alice', vaspDID: group.subA };
    const cases: [unknown, string, string?][] = [
      [{ ...good, asset: 'E TH' }, 'addresses[1].asset', 'asset code'],
      [{ ...good, address: '  ' }, 'addresses[1].address', 'is empty'],
      [{ ...good, address: 'rAddr:' }, 'addresses[1].tag', 'is empty'],
      [{ ...good, address: 'rAddr:12', tag: '12' }, 'addresses[1].address', 'give it once'],
      [{ ...good, address: 'a,b' }, 'addresses[1].address', 'commas'],
      [{ ...good, vaspDID: group.gateway }, 'addresses[1].vaspDID', 'subsidiary'],
      [{ ...good, vaspDID: group.external }, 'addresses[1].vaspDID', 'subsidiary'],
      [{ ...good, customerRef: '' }, 'addresses[1].customerRef', 'is empty'],
      [{ ...good, vaspDID: undefined }, 'addresses[1].vaspDID', 'is required'],
      [{ ...good, address: good.address.toUpperCase().replace('0X', '0x') }, 'addresses[1]', 'duplicates addresses[0]'],
    ];
    for (const [second, field, rule] of cases) {
      const r = await put([good, second]);
      expect({ status: r.status, field: (r.body as ErrorBody).error.field }).toEqual({ status: 400, field });
      if (rule) expect((r.body as ErrorBody).error.message).toContain(rule);
    }
    // Nothing of the refused batches was written.
    const none = await call<{ pagination: { total: number } }>('GET', `/v1/addresses?vaspDID=${group.subA}`);
    expect(none.body.pagination.total).toBe(0);

    // One owner per address: the same entry for another subsidiary is a conflict.
    expect((await put([good])).status).toBe(200);
    const taken = await put([{ ...good, vaspDID: group.subB }]);
    expect(taken.status).toBe(409);
    expect((taken.body as ErrorBody).error.field).toBe('addresses[0].vaspDID');
    expect(
      (await call('DELETE', '/v1/addresses', { addresses: [{ asset: 'eth', address: good.address }] })).body,
    ).toEqual({ deleted: 1, notFound: [] });

    // Query and route parameters.
    expect((await call('GET', '/v1/addresses?perPage=5000')).status).toBe(400);
    expect((await call<ErrorBody>('GET', '/v1/addresses?page=0')).body.error.field).toBe('querystring.page');
    expect((await call('DELETE', '/v1/addresses', { addresses: [] })).status).toBe(400);
    const notSub = await call<ErrorBody>('POST', `/v1/address-book/${group.gateway}/reconcile`);
    expect(notSub.status).toBe(400);
    expect(notSub.body.error.field).toBe('vaspDID');
    expect((await call('GET', `/v1/address-book/${group.external}/reports`)).status).toBe(400);
    expect((await call('GET', `/v1/address-book/${group.subA}/reconcile/address-book-nothing`)).status).toBe(404);
  });

  it('imports a CSV with the CLI, writing rejected rows to a report without stopping', async () => {
    const file = join(dir, 'sub-a.csv');
    const lines = ['asset,address,customerRef,vaspDID'];
    for (let i = 0; i < 120; i++) lines.push(`eth,${evm(i, 'a1').toUpperCase().replace('0X', '0x')},cust-${i},`);
    lines.push(`XRP,rTagMaster1:101,cust-x1,`, `XRP,rTagMaster1:102,cust-x2,`);
    lines.push(`E TH,${evm(500, 'a1')},bad-asset,`); // line 124
    lines.push(`ETH,,empty,`); // 125
    lines.push(`ETH,${evm(501, 'a1')},outsider,${group.external}`); // 126
    lines.push(`ETH,${evm(3, 'a1')},again,`); // 127: duplicate of line 5
    writeFileSync(file, `${lines.join('\n')}\n`);

    const summary = await importAddresses({
      file,
      vaspDid: group.subA,
      api: orch.target('operator'),
      batchSize: 50,
      progress: false,
    });
    expect(summary).toMatchObject({ rows: 126, inserted: 122, updated: 0, unchanged: 0, rejected: 4 });
    const report = readFileSync(summary.errorsPath, 'utf8').trim().split('\n');
    expect(report[0]).toBe('line,asset,address,customerRef,vaspDID,field,reason');
    // In the order found: the unknown VASP is the API's verdict, given when its batch is sent.
    const byLine = new Map(report.slice(1).map((l) => [l.split(',')[0]!, l]));
    expect([...byLine.keys()].sort()).toEqual(['124', '125', '126', '127']);
    expect(byLine.get('124')).toContain('asset code');
    expect(byLine.get('125')).toContain('is empty');
    expect(byLine.get('126')).toContain('subsidiary');
    expect(byLine.get('127')).toContain('duplicate');

    const listed = await call<{ pagination: { total: number }; data: { address: string; networkAddress: string }[] }>(
      'GET',
      `/v1/addresses?vaspDID=${group.subA}&asset=xrp`,
    );
    expect(listed.body.pagination.total).toBe(2);
    expect(listed.body.data.map((d) => d.networkAddress)).toEqual(['rTagMaster1:101', 'rTagMaster1:102']);
    const byRef = await call<{ data: { address: string }[] }>(
      'GET',
      `/v1/addresses?customerRef=cust-7&vaspDID=${group.subA}`,
    );
    expect(byRef.body.data.map((d) => d.address)).toEqual([evm(7, 'a1')]);
    const page2 = await call<{ data: unknown[]; pagination: { total: number } }>(
      'GET',
      `/v1/addresses?vaspDID=${group.subA}&perPage=50&page=3`,
    );
    expect(page2.body.data).toHaveLength(22);
  });

  it('first full sync: uploads the desired set in chunks (tag masters included), continues as new, verifies and reports', async () => {
    const phases = new Set<string>();
    let executions = 0;
    const report = await reconcile(group.subA, orch, (p) => {
      phases.add(p.phase);
      executions = Math.max(executions, p.execution);
    });
    // 120 ETH + 2 tagged XRP + their master.
    expect(report).toMatchObject({
      status: 'succeeded',
      mode: 'full',
      method: 'upload',
      desired: 123,
      added: 123,
      removed: 0,
      rejected: 0,
      chunks: 4,
    });
    expect(report.verifiedBy).toBe('count');
    const net = await atNetwork(group.subA);
    expect(net.size).toBe(123);
    expect(net.get(evm(7, 'a1'))).toBe('cust-7');
    expect(net.has('rTagMaster1:101') && net.has('rTagMaster1:102') && net.has('rTagMaster1')).toBe(true);
    // One upload per chunk, each named after its chunk.
    const uploads = await uploadsAt(group.subA);
    expect(uploads.map((u) => u.file_name.slice(-9))).toEqual(['00001.csv', '00002.csv', '00003.csv', '00004.csv']);
    expect(phases.has('adding') || phases.has('processing')).toBe(true);
    // Four chunks, two per execution: the run continued as new.
    expect(executions).toBeGreaterThanOrEqual(2);

    const reports = await call<{ reports: (ReconcileReport & { rejectedRows: unknown[] })[] }>(
      'GET',
      `/v1/address-book/${group.subA}/reports`,
    );
    expect(reports.body.reports[0]).toMatchObject({ runId: report.runId, status: 'succeeded', added: 123 });
    // Staging is dropped with the run.
    const { rows } = await orch.pool.query(`select 1 from pg_class where relname like $1`, [
      `address_book_delta_${report.runId.replace(/-/g, '')}`,
    ]);
    expect(rows).toHaveLength(0);

    // Nothing changed: an incremental run (the network still matches the last result) with nothing to do.
    const again = await reconcile(group.subA);
    expect(again).toMatchObject({
      status: 'succeeded',
      mode: 'incremental',
      method: 'none',
      added: 0,
      removed: 0,
      desired: 123,
    });
    expect(await uploadsAt(group.subA)).toHaveLength(4);
  });

  it('incremental sync: a small delta of additions, a changed customerRef and deletions, through registerCustomer', async () => {
    expect(
      (
        await call('DELETE', '/v1/addresses', {
          addresses: [0, 1, 2]
            .map((i) => ({ asset: 'ETH', address: evm(i, 'a1') }))
            .concat([{ asset: 'XRP', address: 'rTagMaster1', tag: '101' } as never]),
        })
      ).body,
    ).toEqual({ deleted: 4, notFound: [] });
    expect(
      (
        await put([
          { asset: 'ETH', address: evm(900, 'a1'), customerRef: 'new-1', vaspDID: group.subA },
          { asset: 'USDC', address: evm(901, 'a1'), customerRef: 'new-2', vaspDID: group.subA },
          { asset: 'ETH', address: evm(10, 'a1'), customerRef: 'cust-10-moved', vaspDID: group.subA },
        ])
      ).body,
    ).toEqual({ inserted: 2, updated: 1, unchanged: 0 });

    const report = await reconcile(group.subA);
    // rTagMaster1:102 still needs its master, so only the tagged address goes; the master now carries the
    // customerRef of its remaining tag (cust-x2), which counts as the second update.
    expect(report).toMatchObject({
      status: 'succeeded',
      mode: 'incremental',
      method: 'register',
      added: 2,
      updated: 2,
      removed: 4,
      rejected: 0,
      desired: 121,
    });
    const net = await atNetwork(group.subA);
    expect(net.size).toBe(121);
    expect(net.has(evm(0, 'a1'))).toBe(false);
    expect(net.has('rTagMaster1:101')).toBe(false);
    expect(net.has('rTagMaster1')).toBe(true);
    expect(net.get(evm(10, 'a1'))).toBe('cust-10-moved');
    expect(net.get(evm(901, 'a1'))).toBe('new-2');
    expect(net.get('rTagMaster1')).toBe('cust-x2');
    expect(await uploadsAt(group.subA)).toHaveLength(4);

    // The last tag of the master goes: the master goes with it.
    await call('DELETE', '/v1/addresses', { addresses: [{ asset: 'XRP', address: 'rTagMaster1:102' }] });
    const last = await reconcile(group.subA);
    expect(last).toMatchObject({ status: 'succeeded', removed: 2, added: 0 });
    const after = await atNetwork(group.subA);
    expect([...after.keys()].filter((a) => a.startsWith('rTagMaster1'))).toEqual([]);

    // Someone removes an address at the network behind our back: the count no longer matches the last result, so the
    // next run lists everything (full) and puts it back.
    await sandbox.pool.query('delete from addresses where vasp_did = $1 and address = $2', [group.subA, evm(50, 'a1')]);
    const drift = await reconcile(group.subA);
    expect(drift).toMatchObject({ status: 'succeeded', mode: 'full', added: 1, removed: 0, desired: 119 });
    expect((await atNetwork(group.subA)).get(evm(50, 'a1'))).toBe('cust-50');
    // A full run on request (the nightly schedule's kind).
    const started = await call<{ workflowId: string }>('POST', `/v1/address-book/${group.subA}/reconcile`, {
      mode: 'full',
    });
    expect(started.status).toBe(202);
    const full = await followReconcile(orch.target(), group.subA, started.body.workflowId, {
      intervalMs: 50,
      progress: false,
    });
    expect(full).toMatchObject({ status: 'succeeded', mode: 'full', method: 'none', desired: 119 });
    expect(
      (await call<ErrorBody>('POST', `/v1/address-book/${group.subA}/reconcile`, { mode: 'sometimes' })).body.error
        .field,
    ).toBe('mode');
  });

  it('reports the rows the network refuses, with the reason, and goes on with the rest', async () => {
    const good = Array.from({ length: 60 }, (_, i) => ({
      asset: 'ETH',
      address: evm(i, 'b2'),
      customerRef: `b-${i}`,
      vaspDID: group.subB,
    }));
    expect((await put(good)).status).toBe(200);
    // Rows the registry would refuse today but holds from before (rules drift): the network refuses them.
    await orch.pool.query(
      `insert into address_registry (asset, address, tag, vasp_did, customer_ref) values ('ETH', $1, '', $3, $4), ('ETH', $2, '', $3, $4)`,
      [evm(100, 'b2'), evm(101, 'b2'), group.subB, 'x'.repeat(300)],
    );
    const report = await reconcile(group.subB);
    expect(report).toMatchObject({
      status: 'succeeded',
      method: 'upload',
      added: 60,
      rejected: 2,
      verifiedBy: 'listing',
    });
    const reports = await call<{
      reports: { runId: string; rejectedRows: { address: string; reason: string; action: string }[] }[];
    }>('GET', `/v1/address-book/${group.subB}/reports?limit=1`);
    expect(reports.body.reports[0]!.rejectedRows.map((r) => r.address)).toEqual([evm(100, 'b2'), evm(101, 'b2')]);
    expect(reports.body.reports[0]!.rejectedRows[0]!.reason).toMatch(/not in the network's listing/);
    expect((await atNetwork(group.subB)).size).toBe(60);

    // The same through registerCustomer: the network's own message is the reason.
    await orch.pool.query(
      `insert into address_registry (asset, address, tag, vasp_did, customer_ref) values ('ETH', $1, '', $2, $3)`,
      [evm(102, 'b2'), group.subB, 'y'.repeat(300)],
    );
    await put([{ asset: 'ETH', address: evm(103, 'b2'), customerRef: 'fine', vaspDID: group.subB }]);
    const small = await reconcile(group.subB);
    // Incremental: the new entries, and the two the network refused last time, tried again.
    expect(small).toMatchObject({ status: 'succeeded', mode: 'incremental', method: 'register', added: 1 });
    expect(small.rejected).toBe(3);
    const latest = await call<{ reports: { rejectedRows: { address: string; reason: string }[] }[] }>(
      'GET',
      `/v1/address-book/${group.subB}/reports?limit=1`,
    );
    const refused = latest.body.reports[0]!.rejectedRows.find((r) => r.address === evm(102, 'b2'));
    expect(refused!.reason).toMatch(/customerRef/);
  });

  it('a worker stopped in the middle of a chunked sync hands over to another: no chunk uploaded twice, nothing missing', async () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({
      asset: 'ETH',
      address: evm(i, 'c3'),
      customerRef: `c-${i}`,
      vaspDID: subC,
    }));
    expect((await put(rows)).status).toBe(200);
    const cfg = settings({ chunkRows: 40, chunksPerExecution: 3 });
    const first = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: groupConfig,
      addressBook: cfg,
    });
    let second: RunningOrchestrator | undefined;
    let firstOpen = true;
    try {
      const { workflowId } = await startReconcile(first.target(), subC);
      // A second start while it runs is refused.
      const dup = await call<ErrorBody>('POST', `/v1/address-book/${subC}/reconcile`, undefined, first.apiUrl);
      expect(dup.status).toBe(409);
      // Stop the worker as soon as the query shows a chunk done.
      await eventually(
        async () => {
          const r = await call<{ progress?: ReconcileProgress }>(
            'GET',
            `/v1/address-book/${subC}/reconcile/${workflowId}`,
            undefined,
            first.apiUrl,
          );
          return (r.body.progress?.chunksDone ?? 0) >= 1 ? true : undefined;
        },
        60_000,
        20,
      );
      firstOpen = false;
      await first.close();
      const { rows: mid } = await orch.pool.query<{ state: string; n: string }>(
        `select c.state, count(*) as n from address_book_chunks c join address_book_runs r using (run_id)
          where r.vasp_did = $1 and r.status = 'running' group by c.state`,
        [subC],
      );
      const uploadedAtStop = Number(mid.find((m) => m.state === 'uploaded')?.n ?? 0);
      expect(uploadedAtStop).toBeGreaterThanOrEqual(1);
      expect(uploadedAtStop).toBeLessThan(10);
      expect(mid.find((m) => m.state === 'uploading')).toBeUndefined();

      second = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
        group: groupConfig,
        addressBook: cfg,
        taskQueue: first.taskQueue,
      });
      const report = await followReconcile(second.target(), subC, workflowId, { intervalMs: 100, progress: false });
      expect(report).toMatchObject({ status: 'succeeded', added: 400, chunks: 10, rejected: 0 });
      const uploads = await uploadsAt(subC);
      const names = uploads.map((u) => u.file_name);
      expect(names).toHaveLength(10);
      expect(new Set(names).size).toBe(10);
      const net = await atNetwork(subC);
      expect(net.size).toBe(400);
      expect(rows.every((r) => net.get(r.address) === r.customerRef)).toBe(true);
    } finally {
      if (firstOpen) await first.close();
      await second?.close();
    }
  });

  it('never sends a chunk above the byte limit, and a file the network finds too large fails the run with the reason', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({
      asset: 'ETH',
      address: evm(i, 'd4'),
      customerRef: `customer-${i}`,
      vaspDID: subD,
    }));
    expect((await put(rows)).status).toBe(200);
    // Each row is 65 bytes; 1000 bytes per file holds the header and 14 rows.
    const tight = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: groupConfig,
      addressBook: settings({ chunkRows: 1000, chunkMaxBytes: 1000 }),
    });
    try {
      const report = await reconcile(subD, tight);
      expect(report).toMatchObject({ status: 'succeeded', added: 50, chunks: 4 });
      const uploads = await uploadsAt(subD);
      expect(uploads).toHaveLength(4);
      for (const u of uploads) expect(Number(u.size_bytes)).toBeLessThanOrEqual(1000);
    } finally {
      await tight.close();
    }

    // A network whose limit is below ours: 413, not retried, the run fails and says why.
    const strict = await startSandbox(group.seed, {
      addressBook: { maxUploadBytes: 512, spoolDir: mkdtempSync(join(tmpdir(), 'spool-')) },
    });
    const o = await startOrchestrator(strict.networkConfig(group.gatewayUser), {
      group: groupConfig,
      addressBook: settings({ chunkRows: 1000 }),
    });
    try {
      const rowsE = Array.from({ length: 30 }, (_, i) => ({
        asset: 'ETH',
        address: evm(i, 'e5'),
        customerRef: `customer-${i}`,
        vaspDID: subE,
      }));
      expect((await put(rowsE)).status).toBe(200);
      const report = await reconcile(subE, o);
      expect(report.status).toBe('failed');
      expect(report.error).toMatch(/413.*size limit/);
      const reports = await call<{ reports: ReconcileReport[] }>('GET', `/v1/address-book/${subE}/reports?limit=1`);
      expect(reports.body.reports[0]).toMatchObject({ status: 'failed' });
      expect(reports.body.reports[0]!.error).toMatch(/413/);
      // The failed run released the VASP: a new run may start.
      expect((await call('POST', `/v1/address-book/${subE}/reconcile`, undefined, o.apiUrl)).status).toBe(202);
    } finally {
      await o.close();
      await strict.close();
    }
  });

  it('an upload URL that expired before use is replaced by a fresh one', async () => {
    const shortLived = await startSandbox(group.seed, { addressBook: { uploadUrlTtlSeconds: 1 } });
    // Hold the first upload URL past its lifetime before it is used.
    const client = new NetworkClient(shortLived.networkConfig(group.gatewayUser));
    let held = 0;
    (client as { api: NetworkClient['api'] }).api = client.api.extend({
      hooks: {
        afterResponse: [
          async (request, _options, response) => {
            if (request.url.includes('/address/upload/') && held++ === 0) await new Promise((r) => setTimeout(r, 2200));
            return response;
          },
        ],
      },
    });
    const o = await startOrchestrator(shortLived.networkConfig(group.gatewayUser), {
      group: groupConfig,
      addressBook: settings(),
      networkClient: client,
    });
    try {
      const rows = Array.from({ length: 10 }, (_, i) => ({
        asset: 'ETH',
        address: evm(i, 'f6'),
        customerRef: `f-${i}`,
        vaspDID: subF,
      }));
      expect((await put(rows)).status).toBe(200);
      const report = await reconcile(subF, o);
      expect(report).toMatchObject({ status: 'succeeded', method: 'upload', added: 10, chunks: 1 });
      // The held URL expired; with a 1-second lifetime (whole seconds in the JWT) a fresh one occasionally expires
      // before its POST too, and is replaced in turn. Either way the file arrives once.
      expect(held).toBeGreaterThanOrEqual(2);
      expect(await uploadsAt(subF, shortLived)).toHaveLength(1);
      const { rows: chunk } = await orch.pool.query<{ attempts: number; state: string }>(
        'select attempts, state from address_book_chunks where run_id = $1',
        [report.runId],
      );
      expect(chunk).toEqual([{ attempts: held, state: 'uploaded' }]);
    } finally {
      await o.close();
      await shortLived.close();
    }
  });

  it('creates one nightly schedule per subsidiary, idempotently, skipping overlaps', async () => {
    const config = {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      addressBook: settings({ cron: '15 3 * * *', timezone: 'Europe/Zurich' }),
      temporal: { address: '', namespace: 'default', taskQueue: orch.taskQueue, uiPort: 0 },
    };
    try {
      expect(await ensureAddressBookSchedules(orch.client, config)).toEqual({
        [group.subA]: 'created',
        [group.subB]: 'created',
      });
      expect(await ensureAddressBookSchedules(orch.client, config)).toEqual({
        [group.subA]: 'updated',
        [group.subB]: 'updated',
      });
      const d = await orch.client.schedule.getHandle(workflowIds.addressBookSchedule(group.subA)).describe();
      expect(d.spec.timezone).toBe('Europe/Zurich');
      expect(d.policies.overlap).toBe('SKIP');
      expect(d.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'addressBookReconcile',
        taskQueue: orch.taskQueue,
      });
      expect(
        await ensureAddressBookSchedules(orch.client, {
          ...config,
          addressBook: { ...config.addressBook, cron: undefined },
        }),
      ).toEqual({ [group.subA]: 'deleted', [group.subB]: 'deleted' });
    } finally {
      for (const did of [group.subA, group.subB])
        await orch.client.schedule
          .getHandle(workflowIds.addressBookSchedule(did))
          .delete()
          .catch(() => undefined);
    }
  });
});
