import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  addOutsiderVasp,
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import type { Role } from '../../lib/principal';
import { roleCall } from '../harness/http';
import type { ReviewSyncReport } from '../../counterparties/types';
import { unpushed } from '../../counterparties/store';
import { COUNTERPARTY_REVIEW_SYNC_SCHEDULE, ensureCounterpartyReviewSchedule } from '../../client/counterparties/sync';
import { removeSchedule } from '../../client/schedules';
import type { PlatformConfig } from '../../config';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('counterparties API: reviews, overrides, filters, roles, audit, the network (issue 20)', () => {
  const g = groupSeed();
  const other = addOutsiderVasp(g.seed, 'Other VASP');
  const third = addOutsiderVasp(g.seed, 'Third VASP');
  const fourth = addOutsiderVasp(g.seed, 'Fourth VASP');
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const path = (did: string, rest = '') => `/v1/counterparties/${encodeURIComponent(did)}${rest}`;
  const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

  /** What `vaspDid` holds at the sandbox, read with the sandbox's own directory filter. */
  const atNetwork = async (vaspDid: string, reviewValue: string): Promise<string[]> => {
    const token = await sb.token(g.gatewayUser);
    const q = new URLSearchParams({ reviewedByVaspDID: vaspDid, reviewValue, listingType: 'all' });
    const r = await fetch(`${sb.url}/tf/simple/vasps?${q}`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { vasps: { did: string }[] }).vasps.map((v) => v.did);
  };

  /** Waits until `vaspDid` publishes `reviewValue` of the external VASP; a timeout says what each side holds. */
  const published = (vaspDid: string, reviewValue: string) =>
    eventually(async () => ((await atNetwork(vaspDid, reviewValue)).includes(g.external) ? true : undefined)).catch(
      async (e: Error) => {
        const ours = await orch.pool.query(
          `select vasp_did, review_value, state, attempts, last_error, updated_at, pushed_at
             from counterparty_review_pushes where reviewed_vasp_did = $1`,
          [g.external],
        );
        const network = await sb.pool.query(
          'select vasp_did, review_value, created_at from vasp_reviews where reviewed_vasp_did = $1',
          [g.external],
        );
        throw new Error(
          `${e.message}: ${vaspDid} should publish ${reviewValue}; our pushes ${JSON.stringify(ours.rows)}; ` +
            `the network's reviews ${JSON.stringify(network.rows)}`,
        );
      },
    );

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('reads a never-reviewed counterparty as UNREVIEWED for every subsidiary', async () => {
    const r = await api('viewer', 'GET', path(randomDid()));
    expect(r.status).toBe(200);
    expect(r.body.group).toBeNull();
    expect(r.body.effective.map((e: Json) => [e.subsidiaryDid, e.reviewValue])).toEqual([
      [g.subA, 'UNREVIEWED'],
      [g.subB, 'UNREVIEWED'],
    ]);
  });

  it("writes the group's review and a subsidiary's override that wins; audited; pushed to the network", async () => {
    const put = await api('compliance', 'PUT', path(g.external), {
      reviewValue: 'TRUSTED',
      note: 'due diligence 2026',
      dueAt: future(365),
      jurisdiction: 'DE',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ vaspDid: g.external, subsidiaryDid: null, reviewValue: 'TRUSTED' });
    expect(put.body.reviewedBy).toMatch(/^apikey:/);
    const override = await api('compliance', 'PUT', path(g.external), {
      reviewValue: 'BLOCKED',
      note: 'not for A',
      subsidiaryDid: g.subA,
    });
    expect(override.status).toBe(200);

    const detail = await api('viewer', 'GET', path(g.external));
    expect(detail.body.group.reviewValue).toBe('TRUSTED');
    expect(detail.body.overrides.map((o: Json) => o.subsidiaryDid)).toEqual([g.subA]);
    expect(detail.body.effective.map((e: Json) => [e.reviewValue, e.source])).toEqual([
      ['BLOCKED', 'subsidiary'],
      ['TRUSTED', 'group'],
    ]);

    const { rows } = await orch.pool.query<{ action: string; actor: string }>(
      'select action, actor from audit_log where subject = $1 order by id',
      [g.external],
    );
    expect(rows.map((r) => r.action)).toEqual(['counterparty.review', 'counterparty.review']);
    expect(rows[0]!.actor).toMatch(/^apikey:/);

    // The gateway publishes the group's review, each subsidiary the one that applies to it.
    await published(g.subA, 'BLOCKED');
    await published(g.subB, 'TRUSTED');
    await published(g.gateway, 'TRUSTED');

    // Deleting the override: subsidiary A falls back to the group's review, at the network too.
    const del = await api('compliance', 'DELETE', `${path(g.external)}?subsidiaryDid=${encodeURIComponent(g.subA)}`);
    expect(del.status).toBe(200);
    expect(del.body.deleted.reviewValue).toBe('BLOCKED');
    expect((await api('viewer', 'GET', path(g.external))).body.effective[0].reviewValue).toBe('TRUSTED');
    await published(g.subA, 'TRUSTED');
    expect(
      (
        await orch.pool.query('select 1 from audit_log where subject = $1 and action = $2', [
          g.external,
          'counterparty.review.delete',
        ])
      ).rowCount,
    ).toBe(1);
  });

  it('lists with filters: reviewValue, dueBefore, jurisdiction, subsidiaryDid; paged', async () => {
    await api('compliance', 'PUT', path(other.did), {
      reviewValue: 'MANUAL',
      note: 'ask each time',
      dueAt: future(10),
      jurisdiction: 'SG',
    });
    await api('compliance', 'PUT', path(third.did), { reviewValue: 'BLOCKED', note: '', subsidiaryDid: g.subB });
    const dids = async (query: string) =>
      ((await api('viewer', 'GET', `/v1/counterparties?limit=200&${query}`)).body.data as Json[])
        .filter((r) => [g.external, other.did, third.did].includes(r.vaspDid))
        .map(
          (r) => `${r.vaspDid === g.external ? 'ext' : r.vaspDid === other.did ? 'other' : 'third'}:${r.reviewValue}`,
        )
        .sort();
    expect(await dids('reviewValue=MANUAL')).toEqual(['other:MANUAL']);
    expect(await dids(`dueBefore=${future(30).slice(0, 10)}`)).toEqual(['other:MANUAL']);
    expect(await dids('jurisdiction=SG')).toEqual(['other:MANUAL']);
    expect(await dids(`subsidiaryDid=${encodeURIComponent(g.subB)}`)).toEqual([
      'ext:TRUSTED',
      'other:MANUAL',
      'third:BLOCKED',
    ]);
    expect(await dids(`subsidiaryDid=${encodeURIComponent(g.subA)}`)).toEqual(['ext:TRUSTED', 'other:MANUAL']);
    const first = await api('viewer', 'GET', '/v1/counterparties?limit=1');
    expect(first.body.data).toHaveLength(1);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await api('viewer', 'GET', `/v1/counterparties?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.data[0]).not.toEqual(first.body.data[0]);
  });

  it("fills a review's jurisdiction from the directory's incorporation country after the answer", async () => {
    const token = await sb.token(fourth.user);
    const update = await fetch(`${sb.url}/tf/vasps/update`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        did: fourth.did,
        fields: [{ fieldName: 'incorporationCountry', values: [{ value: 'FR' }] }],
      }),
    });
    expect(update.status).toBe(200);
    const put = await api('compliance', 'PUT', path(fourth.did), { reviewValue: 'MANUAL', note: '' });
    expect(put.body.jurisdiction).toBeNull();
    await eventually(async () =>
      (await api('viewer', 'GET', path(fourth.did))).body.group.jurisdiction === 'FR' ? true : undefined,
    );
    expect(
      ((await api('viewer', 'GET', '/v1/counterparties?jurisdiction=FR&limit=200')).body.data as Json[]).map(
        (r) => r.vaspDid,
      ),
    ).toContain(fourth.did);
  });

  it('lets viewers read, and only compliance write', async () => {
    const did = randomDid();
    const body = { reviewValue: 'TRUSTED', note: '' };
    expect((await api('viewer', 'GET', '/v1/counterparties')).status).toBe(200);
    expect((await api('viewer', 'PUT', path(did), body)).status).toBe(403);
    expect((await api('operator', 'PUT', path(did), body)).status).toBe(403);
    expect((await api('operator', 'DELETE', path(g.external))).status).toBe(403);
    expect((await api('operator', 'POST', '/v1/counterparties/sync')).status).toBe(403);
    expect((await api('compliance', 'PUT', path(did), body)).status).toBe(200);
    expect((await api('admin', 'DELETE', path(did))).status).toBe(200);
    expect((await api('admin', 'DELETE', path(did))).status).toBe(404);
  });

  it('answers 400 naming the field for bad input, and saves nothing', async () => {
    const did = randomDid();
    const bad = async (target: string, body: unknown, field: string) => {
      const r = await api('compliance', 'PUT', target, body);
      expect([r.status, r.body.error?.field]).toEqual([400, field]);
    };
    await bad(path(did), { reviewValue: 'GOOD', note: '' }, 'reviewValue');
    await bad(path('not-a-did'), { reviewValue: 'TRUSTED', note: '' }, 'vaspDID');
    await bad(path(did), { reviewValue: 'TRUSTED', note: '', dueAt: '2020-01-01' }, 'dueAt');
    await bad(path(did), { reviewValue: 'TRUSTED', note: '', dueAt: 'tomorrow' }, 'dueAt');
    await bad(path(did), { reviewValue: 'TRUSTED', note: 'x'.repeat(2001) }, 'note');
    await bad(path(did), { reviewValue: 'TRUSTED', note: '', subsidiaryDid: 'nope' }, 'subsidiaryDid');
    await bad(path(did), { reviewValue: 'TRUSTED', note: '', jurisdiction: 'XX' }, 'jurisdiction');
    await bad(path(g.subA), { reviewValue: 'TRUSTED', note: '' }, 'vaspDID');
    const notOurs = await api('compliance', 'PUT', path(did), {
      reviewValue: 'TRUSTED',
      note: '',
      subsidiaryDid: randomDid(),
    });
    expect([notOurs.status, notOurs.body.error?.field]).toEqual([404, 'subsidiaryDid']);
    for (const [query, field] of [
      ['reviewValue=GOOD', 'querystring.reviewValue'],
      ['jurisdiction=XX', 'querystring.jurisdiction'],
      ['dueBefore=soon', 'querystring.dueBefore'],
      ['subsidiaryDid=nope', 'querystring.subsidiaryDid'],
    ]) {
      const r = await api('viewer', 'GET', `/v1/counterparties?${query}`);
      expect([r.status, r.body.error?.field]).toEqual([400, field]);
    }
    expect((await api('viewer', 'GET', path(did))).body.group).toBeNull();
  });

  it('answers at once when the network hangs, keeps the push pending, and the reconciliation delivers it', async () => {
    // A network that accepts connections and never answers.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const dead = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const offline = await startOrchestrator(
      { ...sb.networkConfig(g.gatewayUser), authUrl: dead, baseUrl: dead, baseUrlPii: dead },
      { group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] } },
    );
    const counterparty = third.did;
    try {
      const started = Date.now();
      const r = await fetch(`${offline.apiUrl}${path(counterparty)}`, {
        method: 'PUT',
        headers: offline.headers('compliance', { 'content-type': 'application/json' }),
        body: JSON.stringify({ reviewValue: 'MANUAL', note: 'while the network hangs' }),
      });
      expect(r.status).toBe(200);
      // Far below the client's 30 s timeout, which a push made before answering would wait out.
      expect(Date.now() - started).toBeLessThan(5_000);
      // Subsidiary B's own review (BLOCKED, from the list test) is at the network already: only the group's is due.
      expect((await unpushed(orch.pool, 10, counterparty)).map((p) => [p.vaspDid, p.reviewValue]).sort()).toEqual(
        [
          [g.gateway, 'MANUAL'],
          [g.subA, 'MANUAL'],
        ].sort(),
      );
    } finally {
      await offline.close();
      held.forEach((s) => s.destroy());
      silent.close();
    }
    const sync = await api('compliance', 'POST', '/v1/counterparties/sync');
    expect(sync.status).toBe(202);
    await orch.client.workflow.getHandle(sync.body.workflowId).result();
    expect(await unpushed(orch.pool, 10, counterparty)).toEqual([]);
    expect(await atNetwork(g.gateway, 'MANUAL')).toContain(counterparty);
    expect(await atNetwork(g.subA, 'MANUAL')).toContain(counterparty);
    expect(await atNetwork(g.subB, 'BLOCKED')).toContain(counterparty);
  });

  it('the reconciliation reports a difference made at the network behind our back, and audits its report', async () => {
    // Everything of ours has reached the network first.
    await eventually(async () => ((await atNetwork(g.subB, 'TRUSTED')).includes(g.external) ? true : undefined));
    const token = await sb.token(g.gatewayUser);
    const r = await fetch(`${sb.url}/tf/vasps/${encodeURIComponent(g.subB)}/review`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reviewedVaspDID: g.external, reviewValue: 'BLOCKED', note: 'changed at the network' }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ vaspDID: g.subB, reviewedVaspDID: g.external, reviewValue: 'BLOCKED' });

    // A VASP's reviews are its own at the sandbox: no token, or another VASP's user, may not list by them.
    const byReviewer = `${sb.url}/tf/simple/vasps?reviewedByVaspDID=${encodeURIComponent(g.subB)}`;
    expect((await fetch(byReviewer)).status).toBe(401);
    const outsider = await sb.token(g.externalUser);
    expect((await fetch(byReviewer, { headers: { authorization: `Bearer ${outsider}` } })).status).toBe(403);
    expect((await fetch(`${sb.url}/tf/simple/vasps?reviewValue=BLOCKED`)).status).toBe(400);

    const started = await api('compliance', 'POST', '/v1/counterparties/sync');
    expect(started.status).toBe(202);
    const report = (await orch.client.workflow.getHandle(started.body.workflowId).result()) as ReviewSyncReport;
    expect(report.unread).toEqual([]);
    expect(report.differences).toContainEqual({
      vaspDid: g.subB,
      reviewedVaspDid: g.external,
      ours: 'TRUSTED',
      network: 'BLOCKED',
    });
    expect(report.differences.filter((d) => d.vaspDid === g.subA && d.reviewedVaspDid === g.external)).toEqual([]);
    const { rows } = await orch.pool.query<{ details: { report: ReviewSyncReport } }>(
      "select details from audit_log where action = 'counterparty.sync' and subject = $1 order by id desc limit 1",
      [started.body.workflowId],
    );
    expect(rows[0]!.details.report.differences).toEqual(report.differences);
  });
  it("runs nightly as a Temporal Schedule at the address book's time, and is removed with the cron off", async () => {
    const config = (cron: string | undefined) =>
      ({
        group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
        addressBook: { cron, timezone: 'Europe/Zurich' },
        temporal: { taskQueue: orch.taskQueue },
      }) as unknown as Pick<PlatformConfig, 'group' | 'addressBook' | 'temporal'>;
    await removeSchedule(orch.client, COUNTERPARTY_REVIEW_SYNC_SCHEDULE);
    try {
      expect(await ensureCounterpartyReviewSchedule(orch.client, config('0 3 * * *'))).toBe('created');
      const handle = orch.client.schedule.getHandle(COUNTERPARTY_REVIEW_SYNC_SCHEDULE);
      await handle.trigger();
      const started = await eventually(
        async () => (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId,
        20_000,
        200,
      );
      const report = (await orch.client.workflow.getHandle(started).result()) as ReviewSyncReport;
      expect(report.trigger).toBe('schedule');
      expect(report.unread).toEqual([]);
    } finally {
      expect(await ensureCounterpartyReviewSchedule(orch.client, config(undefined))).toBe('deleted');
    }
  });
});
