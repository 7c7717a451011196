/**
 * Issue 23, items 1-3: deposits the custody system reports (POST /v1/deposits), held by their workflow
 * (workflows/deposit.ts), matched at the network with tx/notify and released or marked for return. Against the real
 * Temporal server, PostgreSQL and the sandbox over HTTP; the sandbox plays the originator VASP.
 */
import { randomBytes } from 'node:crypto';
import { createDidKeyRecord } from '../../lib/crypto';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { bearerCall, roleCall } from '../harness/http';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** 1.5 ETH: above FATF's 1,000 USD threshold at the embedded price table's ETH price. */
const ABOVE = '1500000000000000000';
/** 0.0001 ETH: below it. */
const BELOW = '100000000000000';

describe('deposits: reported, held, matched at the network, released (issue 23)', () => {
  const g = groupSeed();
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;

  const api = (method: string, path: string, body?: unknown, role: 'operator' | 'viewer' | 'admin' = 'operator') =>
    roleCall(orch, role, method, path, body);
  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  const evm = () => `0x${randomBytes(20).toString('hex')}`;
  const ethHash = () => `0x${randomBytes(32).toString('hex')}`;
  /** A fresh address of the subsidiary in the group's registry (shared by every suite: addresses are random). */
  const ownAddress = async (vaspDID = g.subA) => {
    const address = evm();
    const r = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID, asset: 'ETH', address, customerRef: `cust-${address.slice(-6)}` }],
    });
    expect(r).toMatchObject({ status: 200, body: { inserted: 1 } });
    return address;
  };
  const report = (over: Json) =>
    api('POST', '/v1/deposits', { vaspDid: g.subA, asset: 'ETH', txHash: ethHash(), amount: ABOVE, ...over });
  const deposit = async (id: string) => (await api('GET', `/v1/deposits/${id}`, undefined, 'viewer')).body;
  const until = (id: string, check: (d: Json) => boolean, timeoutMs = 45_000) =>
    eventually(
      async () => {
        const d = await deposit(id);
        return check(d) ? d : undefined;
      },
      timeoutMs,
      200,
    );
  const auditActions = async (id: string) =>
    (
      await orch.pool.query<{ action: string }>('select action from audit_log where subject = $1 order by seq', [id])
    ).rows.map((r) => r.action);
  /** The network's messages to the subsidiary at the address: one deposit must never yield two. */
  const messagesTo = async (destination: string) => {
    const page = await sandboxCall(
      'GET',
      `/tx/list?vaspDID=${encodeURIComponent(g.subA)}&txDirection=incoming&resultsPerPage=100`,
    );
    return (page.transactions as Json[]).filter((t) => t.transactionBlockchainInfo?.destination === destination);
  };

  /** How the simulated originator answers a deposit to `to`: its data `{afterSeconds}` late, or 'never'. */
  const originatorAnswers = async (to: string, answer: 'never' | { afterSeconds: number }) => {
    const r = await fetch(`${sb.url}/sandbox/counterparties/${g.external}/deposits`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ [to]: answer }),
    });
    expect(r.status).toBe(200);
  };

  /** A deposit above the threshold to a fresh address of subsidiary A, whose originator never answers, to `o`. */
  const reportUnanswered = async (o: RunningOrchestrator) => {
    const to = await ownAddress();
    await originatorAnswers(to, 'never');
    const created = await roleCall(o, 'operator', 'POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: ethHash(),
      amount: ABOVE,
      to,
    });
    return { to, created };
  };

  beforeAll(async () => {
    // Faults switchable (none on unless a test sets them): one test makes the network refuse tx/notify for a while.
    sb = await startSandbox(g.seed, { faults: true });
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      incoming: { routeDeadline: '3s', routeGiveUpAfter: '1h', reviewDeadline: '3s', pollInterval: '2s' },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 3_600_000, recheckInitialMs: 500, recheckMaxMs: 2_000 },
    });
    gwToken = await sb.token(g.gatewayUser);
    for (const [did, key] of [
      [g.gateway, gatewayKey],
      [g.subA, subAKey],
    ] as const) {
      await sandboxCall('POST', '/tf/vasps/update', {
        did,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }],
      });
    }
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('the transfer arrived first: the deposit is matched to it (one message) and RELEASED once it is ACCEPTED', async () => {
    const to = await ownAddress();
    const sent = await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: to, amount: ABOVE });
    // Reported at once: the transfer may still wait at the gateway to be routed to the subsidiary, where the network's
    // matching (within the VASP the report names) would not see it.
    const created = await report({ to, from: `0x${'55'.repeat(20)}` });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'HELD', classification: 'TRAVELRULE', vaspDid: g.subA, to });
    const done = await until(created.body.id, (d) => d.status === 'RELEASED');
    expect(done).toMatchObject({ transactionId: sent.id, networkStatus: 'ACCEPTED', decidedAt: expect.any(String) });
    expect((await sandboxCall('GET', `/tx/info?id=${sent.id}`)).status).toBe('ACCEPTED');
    expect(await messagesTo(to)).toHaveLength(1);
    const actions = await auditActions(created.body.id);
    expect(actions[0]).toBe('deposit.reported');
    expect(actions.at(-1)).toBe('deposit.released');
    expect(actions.filter((a) => a === 'deposit.released')).toHaveLength(1);
    // Written by a local activity of the real worker: its key names the call (workflow, run, activity id, then a digest
    // of its arguments; activities/context.ts localCallDigests), so a retried task's different call is not taken for it.
    const { rows } = await orch.pool.query<{ idempotency_key: string }>(
      `select idempotency_key from audit_log where subject = $1 and action = 'deposit.released'`,
      [created.body.id],
    );
    expect(rows[0]!.idempotency_key).toMatch(
      new RegExp(`^${workflowIds.deposit(created.body.id)}/[0-9a-f-]{36}/\\d+/[\\w-]{16}$`),
    );
    // No custody callback URL here: the decision is not called back, and the run schedules no activity for it.
    const { events } = await orch.client.workflow.getHandle(workflowIds.deposit(created.body.id)).fetchHistory();
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
  });

  it('reported before the originator’s transfer: AWAITING_DATA on an INCOMPLETE message, then one transfer and RELEASED', async () => {
    const to = await ownAddress();
    await originatorAnswers(to, { afterSeconds: 4 });
    const created = await report({ to });
    expect(created.status).toBe(201);
    const waiting = await until(created.body.id, (d) => d.status === 'AWAITING_DATA', 20_000);
    expect(waiting).toMatchObject({ networkStatus: 'INCOMPLETE', transactionId: expect.any(String) });
    const done = await until(created.body.id, (d) => d.status === 'RELEASED', 60_000);
    // The originator's create completed the INCOMPLETE message: the same id, now ACCEPTED by the group.
    expect(done).toMatchObject({ transactionId: waiting.transactionId, networkStatus: 'ACCEPTED' });
    expect(await messagesTo(to)).toHaveLength(1);
    const actions = await auditActions(created.body.id);
    expect(actions).toEqual(expect.arrayContaining(['deposit.reported', 'deposit.awaiting-data', 'deposit.released']));
  });

  it('the webhook of the matched message’s ACCEPTED wakes the deposit: RELEASED before its next recheck is due', async () => {
    // An orchestrator of its own whose deposits recheck only every 90 s; the gateway's webhook reaches the first one's
    // API, which finds the deposit by its message and signals its workflow.
    const slow = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 3_600_000, recheckInitialMs: 90_000, recheckMaxMs: 90_000 },
    });
    try {
      const to = await ownAddress();
      await originatorAnswers(to, { afterSeconds: 2 });
      const created = await roleCall(slow, 'operator', 'POST', '/v1/deposits', {
        vaspDid: g.subA,
        asset: 'ETH',
        txHash: ethHash(),
        amount: ABOVE,
        to,
      });
      expect(created.status).toBe(201);
      const waiting = await until(created.body.id, (d) => d.status === 'AWAITING_DATA', 20_000);
      const done = await until(created.body.id, (d) => d.status === 'RELEASED', 80_000);
      expect(done).toMatchObject({ transactionId: waiting.transactionId, networkStatus: 'ACCEPTED' });
      expect(Date.parse(done.decidedAt) - Date.parse(created.body.createdAt)).toBeLessThan(85_000);
      const { events } = await slow.client.workflow.getHandle(workflowIds.deposit(created.body.id)).fetchHistory();
      const signals = (events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []);
      expect(signals).toContain('depositMatchMoved');
      // The one timer of the wait it cut short, and no second check on a timer before the release.
      const fired = (events ?? []).filter((e) => e.timerFiredEventAttributes).length;
      expect(fired).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('an originator that never answers: AWAITING_DATA, then RETURN_REQUIRED at the data deadline', async () => {
    // An orchestrator of its own whose deposits wait 4 s for the data (DEPOSIT_DATA_DEADLINE), on the same network.
    const short = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 4_000, recheckInitialMs: 500, recheckMaxMs: 60_000 },
    });
    try {
      const { to, created } = await reportUnanswered(short);
      expect(created.status).toBe(201);
      const deadline = Date.parse(created.body.dataDeadlineAt);
      expect(deadline - Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(3_900);
      await until(created.body.id, (d) => d.status === 'AWAITING_DATA', 10_000);
      const returned = await until(created.body.id, (d) => d.status === 'RETURN_REQUIRED', 20_000);
      expect(returned).toMatchObject({ networkStatus: 'INCOMPLETE', reason: expect.stringMatching(/deadline/) });
      expect(Date.parse(returned.decidedAt)).toBeGreaterThanOrEqual(deadline);
      expect(await messagesTo(to)).toHaveLength(1);
      expect(await auditActions(created.body.id)).toEqual([
        'deposit.reported',
        'deposit.awaiting-data',
        'deposit.return-required',
      ]);
      // The INCOMPLETE message is the group's own report, followed by the deposit's workflow: its webhook starts no
      // incoming-transfer workflow (there is nothing to route or confirm until the originator completes it).
      const incoming = orch.client.workflow.getHandle(workflowIds.incomingTransfer(returned.transactionId));
      await expect(incoming.describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
    } finally {
      await short.close();
    }
  });

  it("the network refuses the report past the report's deadline: the originator's time counts from the INCOMPLETE message", async () => {
    const faults = (config: Json) => sb.setFaults(config);
    const short = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 4_000, recheckInitialMs: 500, recheckMaxMs: 60_000 },
    });
    try {
      // tx/notify answers 503 (the network down or holding the group's calls back) until a second past the deadline.
      await faults({ errors: { share: 0, routes: { 'POST /tx/notify': 1 } } });
      const { to, created } = await reportUnanswered(short);
      expect(created.status).toBe(201);
      const reportDeadline = Date.parse(created.body.dataDeadlineAt);
      await new Promise((r) => setTimeout(r, reportDeadline + 1_000 - Date.now()));
      expect(await messagesTo(to)).toHaveLength(0);
      expect((await roleCall(short, 'viewer', 'GET', `/v1/deposits/${created.body.id}`)).body.status).toBe('HELD');
      const reachable = Date.now();
      await faults({});
      const read = async (check: (d: Json) => boolean, timeoutMs: number) =>
        eventually(async () => {
          const d = (await roleCall(short, 'viewer', 'GET', `/v1/deposits/${created.body.id}`)).body as Json;
          return check(d) ? d : undefined;
        }, timeoutMs);
      // Asked now, the originator gets its 4 s: AWAITING_DATA with the deadline counted again, not returned at once.
      const awaiting = await read((d) => d.status !== 'HELD', 30_000);
      expect(awaiting).toMatchObject({ status: 'AWAITING_DATA', networkStatus: 'INCOMPLETE' });
      const deadline = Date.parse(awaiting.dataDeadlineAt);
      expect(deadline).toBeGreaterThanOrEqual(reachable + 4_000);
      const { rows } = await short.pool.query<{ details: Json }>(
        `select details from audit_log where subject = $1 and action = 'deposit.awaiting-data'`,
        [created.body.id],
      );
      expect(rows).toEqual([{ details: expect.objectContaining({ dataDeadlineAt: awaiting.dataDeadlineAt }) }]);
      const returned = await read((d) => d.status === 'RETURN_REQUIRED', 30_000);
      expect(Date.parse(returned.decidedAt)).toBeGreaterThanOrEqual(deadline);
      expect(returned.dataDeadlineAt).toBe(awaiting.dataDeadlineAt);
      expect(await messagesTo(to)).toHaveLength(1);
    } finally {
      await faults({});
      await short.close();
    }
  });

  it("the receiving subsidiary's country sets the data deadline and its action: held for a compliance officer past it", async () => {
    // Subsidiary A in Switzerland, whose deposits wait 4 s and are then held for a person; the default stays 1 h, return.
    const swiss = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'CH' } },
      deposits: {
        matchWindowMs: 120_000,
        dataDeadlineMs: 3_600_000,
        recheckInitialMs: 500,
        recheckMaxMs: 2_000,
        byCountry: { CH: { dataDeadlineMs: 4_000, deadlineAction: 'review' } },
      },
    });
    try {
      const { created } = await reportUnanswered(swiss);
      expect(created.status).toBe(201);
      const waits = Date.parse(created.body.dataDeadlineAt) - Date.parse(created.body.createdAt);
      expect(waits).toBeGreaterThanOrEqual(3_900);
      expect(waits).toBeLessThan(60_000);
      const read = (id: string) => roleCall(swiss, 'viewer', 'GET', `/v1/deposits/${id}`).then((r) => r.body as Json);
      const held = await eventually(async () => {
        const d = await read(created.body.id);
        return /held for a compliance officer/.test(d.reason ?? '') ? d : undefined;
      }, 20_000);
      expect(held).toMatchObject({ status: 'AWAITING_DATA', networkStatus: 'INCOMPLETE', decidedAt: null });
      // Still held a few checks later: the deadline acted once, and returned nothing.
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await read(created.body.id)).status).toBe('AWAITING_DATA');
      const released = await roleCall(swiss, 'compliance', 'POST', `/v1/deposits/${created.body.id}/decision`, {
        decision: 'release',
        reason: 'originator known; data received by e-mail',
      });
      expect(released.status).toBe(200);
      expect(released.body).toMatchObject({ status: 'RELEASED', decidedBy: expect.stringMatching(/^apikey:/) });
    } finally {
      await swiss.close();
    }
  });

  it('below the subsidiary’s threshold: RELEASED at once, nothing reported to the network', async () => {
    const to = await ownAddress(g.subB);
    const created = await report({ vaspDid: g.subB, to, amount: BELOW });
    expect(created.status).toBe(201);
    expect(created.body.classification).toBe('BELOW_THRESHOLD');
    const done = await until(created.body.id, (d) => d.status === 'RELEASED', 10_000);
    expect(done).toMatchObject({ transactionId: null, reason: expect.stringMatching(/below/) });
    const page = await sandboxCall('GET', `/tx/list?vaspDID=${encodeURIComponent(g.subB)}&txDirection=incoming`);
    expect((page.transactions as Json[]).filter((t) => t.transactionBlockchainInfo?.destination === to)).toEqual([]);
  });

  it('the same deposit reported twice: one row, one workflow, the same answer', async () => {
    const to = await ownAddress(g.subB);
    const body = { vaspDid: g.subB, to, amount: BELOW, txHash: ethHash(), outputIndex: 1 };
    const [first, second] = await Promise.all([report(body), report(body)]);
    expect([first.status, second.status].sort()).toEqual([200, 201]);
    expect(second.body.id).toBe(first.body.id);
    await until(first.body.id, (d) => d.status === 'RELEASED', 10_000);
    // Again after it finished (the hash in upper case): the same row, and no second workflow under its id.
    const again = await report({ ...body, txHash: `0x${body.txHash.slice(2).toUpperCase()}` });
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, status: 'RELEASED' } });
    const rows = await orch.pool.query('select id from deposits where tx_hash = $1', [body.txHash]);
    expect(rows.rowCount).toBe(1);
    const runs = orch.client.workflow.list({ query: `WorkflowId = '${workflowIds.deposit(first.body.id)}'` });
    let count = 0;
    for await (const _ of runs) count += 1;
    expect(count).toBe(1);
    // The same output with another amount is not the same deposit.
    const other = await report({ ...body, amount: '5' });
    expect(other).toMatchObject({ status: 409, body: { error: expect.objectContaining({ field: 'txHash' }) } });
    // Every role reads; the list is paged.
    const list = await api('GET', `/v1/deposits?vaspDid=${encodeURIComponent(g.subB)}&limit=1`, undefined, 'viewer');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.nextCursor).toEqual(expect.any(String));
  });

  it('a compliance officer releases one AWAITING_DATA deposit and returns another; other roles 403, a second decision 409', async () => {
    const decide = (id: string, body: Json, role: 'compliance' | 'operator' | 'viewer' = 'compliance') =>
      roleCall(orch, role, 'POST', `/v1/deposits/${id}/decision`, body);
    /** A deposit whose originator never sends its data: AWAITING_DATA until the hour-long deadline. */
    const awaitingData = async () => {
      const to = await ownAddress();
      await originatorAnswers(to, 'never');
      const created = await report({ to });
      expect(created.status).toBe(201);
      return (await until(created.body.id, (d) => d.status === 'AWAITING_DATA', 20_000)).id as string;
    };
    const [kept, sent] = await Promise.all([awaitingData(), awaitingData()]);
    const release = { decision: 'release', reason: 'originator confirmed the data out of band' };

    for (const role of ['viewer', 'operator'] as const) expect((await decide(kept, release, role)).status).toBe(403);
    for (const [body, field] of [
      [{ decision: 'keep', reason: 'x' }, 'decision'],
      [{ decision: 'release', reason: '' }, 'reason'],
      [{ decision: 'release', reason: 'x'.repeat(501) }, 'reason'],
      [{ decision: 'release' }, 'reason'],
    ] as const) {
      const r = await decide(kept, body);
      expect({ body, status: r.status, field: r.body.error?.field }).toEqual({ body, status: 400, field });
    }
    expect((await deposit(kept)).status).toBe('AWAITING_DATA');

    const released = await decide(kept, release);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({
      id: kept,
      status: 'RELEASED',
      reason: release.reason,
      decidedBy: expect.stringMatching(/^apikey:/),
      decidedAt: expect.any(String),
    });
    // The answer is the deposit as it is read once the decision is written.
    expect(released.body).toEqual(await deposit(kept));

    const returned = await decide(sent, { decision: 'return', reason: 'sender is a sanctioned exchange' });
    expect(returned).toMatchObject({
      status: 200,
      body: {
        id: sent,
        status: 'RETURN_REQUIRED',
        reason: 'sender is a sanctioned exchange',
        decidedBy: expect.any(String),
      },
    });

    // Audited under the officer's name, with the decision and the principal.
    const { rows } = await orch.pool.query<{ actor: string; action: string; details: Json }>(
      'select actor, action, details from audit_log where subject = $1 order by seq',
      [kept],
    );
    expect(rows.at(-1)).toMatchObject({
      actor: released.body.decidedBy,
      action: 'deposit.released',
      details: {
        from: 'AWAITING_DATA',
        to: 'RELEASED',
        decision: 'release',
        reason: release.reason,
        principal: expect.objectContaining({ kind: 'api-key', roles: expect.arrayContaining(['compliance']) }),
      },
    });
    expect(rows.filter((r) => r.action === 'deposit.released')).toHaveLength(1);
    expect(await auditActions(sent)).toEqual(['deposit.reported', 'deposit.awaiting-data', 'deposit.return-required']);

    // Final: a second decision is refused, names the status, and changes nothing.
    const again = await decide(kept, { decision: 'return', reason: 'changed my mind' });
    expect(again).toMatchObject({ status: 409, body: { error: { message: expect.stringMatching(/RELEASED/) } } });
    expect(await deposit(kept)).toEqual(released.body);
    expect((await decide('dep-nothing', release)).status).toBe(404);
    const run = await orch.client.workflow.getHandle(workflowIds.deposit(kept)).describe();
    expect(run.status.name).toBe('COMPLETED');
  });

  it('bad input answers 400 naming the field, and stores nothing', async () => {
    const to = await ownAddress();
    const stranger = evm();
    const cases: [Json, string][] = [
      [{ to, txHash: `0x${'ab'.repeat(31)}` }, 'txHash'],
      [{ to, txHash: 'ab'.repeat(32) }, 'txHash'],
      [{ to, amount: '1.5' }, 'amount'],
      [{ to, amount: '0' }, 'amount'],
      [{ to: stranger }, 'to'],
      [{ to, vaspDid: g.subB }, 'to'],
      [{ to, vaspDid: g.external }, 'vaspDid'],
      [{ to, asset: 'DOGE' }, 'asset'],
      [{ to, from: 'not-an-address' }, 'from'],
      [{ to, outputIndex: -1 }, 'outputIndex'],
    ];
    for (const [over, field] of cases) {
      const r = await report(over);
      expect({ over, status: r.status, field: r.body.error?.field }).toEqual({ over, status: 400, field });
    }
    const viewer = await api('POST', '/v1/deposits', { vaspDid: g.subA }, 'viewer');
    expect(viewer.status).toBe(403);
    const stored = await orch.pool.query('select id from deposits where to_address = any($1)', [[to, stranger]]);
    expect(stored.rowCount).toBe(0);
    expect((await api('GET', '/v1/deposits/dep-nothing', undefined, 'viewer')).status).toBe(404);
  });
});
