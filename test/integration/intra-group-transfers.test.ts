import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const fixture = JSON.parse(readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8')) as Json;

/**
 * Issue 15, item 3: a transfer from one subsidiary of the group to another. The group is originator and beneficiary:
 * subsidiary A's outgoing workflow sends it and follows it to the end, subsidiary B's incoming workflow confirms,
 * screens and accepts it; one network transaction, one workflow per side.
 */
describe('a transfer between two subsidiaries of the group', () => {
  const g = groupSeed();
  const keyA = createDidKeyRecord();
  const keyB = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.subA, privateKeyHex: keyA.keys[0].privateKeyHex },
        { vaspDID: g.subB, privateKeyHex: keyB.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '1h',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      transfers: { pollIntervalMs: 600_000, answerDeadlineMs: 120_000 },
    });
    const gw = await sb.token(g.gatewayUser);
    const call = async (path: string, body: unknown) => {
      const r = await fetch(`${sb.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status).toBe(200);
      return (await r.json()) as Json;
    };
    for (const [did, key] of [
      [g.subA, keyA],
      [g.subB, keyB],
    ] as const) {
      await call('/tf/vasps/update', { did, fields: [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }] });
    }
    // The network tells the group through the gateway's webhook only: no poll helps (10 min).
    const hook = await call('/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const api = async (
    method: string,
    path: string,
    role: 'operator' | 'viewer' | 'compliance' | 'admin',
    body?: unknown,
    extra: Record<string, string> = {},
  ) => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers(role, { ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const runs = async (workflowId: string) => {
    let n = 0;
    for await (const _ of orch.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n += 1;
    return n;
  };

  it('subsidiary A sends, subsidiary B confirms, screens and accepts; each side ends ACCEPTED, nothing is created twice', async () => {
    const destination = `0x${randomBytes(20).toString('hex')}`;
    const registered = await api('PUT', '/v1/addresses', 'admin', {
      addresses: [{ vaspDID: g.subB, asset: 'ETH', address: destination, customerRef: 'b-customer' }],
    });
    expect(registered.status).toBe(200);

    const accepted = await api(
      'POST',
      '/v1/transfers',
      'operator',
      {
        transactionAsset: 'ETH',
        transactionAmount: '1000',
        originatorVASPdid: g.subA,
        beneficiaryVASPdid: g.subB,
        transactionBlockchainInfo: { destination },
        originator: fixture.originator,
        beneficiary: fixture.beneficiary,
      },
      { 'idempotency-key': randomUUID() },
    );
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;

    // The originator's side: sent end to end (A's and B's keys), and ended by B's answer.
    const outgoing = await eventually(async () => {
      const s = (await api('GET', `/v1/transfers/${id}`, 'viewer')).body as TransferState;
      return s.final ? s : undefined;
    }, 60_000);
    expect(outgoing).toMatchObject({
      status: 'ACCEPTED',
      mode: 'end-to-end',
      originatorVaspDid: g.subA,
      beneficiaryVaspDid: g.subB,
    });
    const txId = outgoing.transactionId!;

    // The beneficiary's side: its incoming workflow decrypted with B's key, screened and accepted.
    const incoming = await eventually(async () => {
      // Compliance: screening results are theirs to read (viewers get the transfer without them).
      const r = await api('GET', `/v1/incoming-transfers/${txId}`, 'compliance');
      return r.status === 200 && (r.body as IncomingStatus).phase === 'completed'
        ? (r.body as IncomingStatus)
        : undefined;
    }, 30_000);
    expect(incoming).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subB });
    expect(incoming.screening).toMatchObject({ nameHits: [], addressHits: [] });
    expect(incoming.screening!.screenedNames).toBeGreaterThan(0);

    // At the network: one transaction, confirmed and accepted by B's side.
    const { rows } = await sb.pool.query<{ id: string; status: string; body: Json }>(
      'select id, status, body from transactions where transaction_ref = $1',
      [id],
    );
    expect(rows.map((r) => [r.id, r.status])).toEqual([[txId, 'ACCEPTED']]);
    const actions = (rows[0]!.body.actions as { action: string }[]).map((a) => a.action);
    expect(actions.filter((a) => a === 'accept')).toHaveLength(1);
    expect(actions).toContain('confirm');
    // One workflow per side, each run once.
    expect(await runs(`outgoing-${id}`)).toBe(1);
    expect(await runs(`incoming-${txId}`)).toBe(1);
    // Every delivery about it reached both sides.
    const outcomes = await orch.pool.query<{ outcome: string }>(
      'select outcome from received_webhooks where transaction_id = $1',
      [txId],
    );
    expect(outcomes.rows.length).toBeGreaterThan(0);
    // Both sides get each webhook; the incoming side skips those that report its own steps back (known).
    for (const { outcome } of outcomes.rows) expect(outcome).toMatch(/^(signalled|late)\+(incoming|late|known)$/);
    expect(outcomes.rows.some(({ outcome }) => outcome.endsWith('+incoming'))).toBe(true);
  });
});
