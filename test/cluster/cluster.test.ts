import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NetworkClient } from '../../network/client';
import { followReconcile, startReconcile } from '../../client/cli/addresses';
import { createDidKeyRecord } from '../../lib/crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import { addressBookTestSettings, evm, networkBook } from '../harness/address-book';
import { restartTemporalServer } from '../harness/cluster';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

jest.setTimeout(240_000);

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as {
  originator: Record<string, unknown>;
  beneficiary: Record<string, unknown>;
};

/**
 * The production topology this machine can run: the Temporal server on PostgreSQL (test/harness/cluster.ts), two
 * workers with an API each on one task queue, the sandbox as the network. Outgoing, incoming and reconciliation end to
 * end, and a restart of the Temporal server while a transfer's create is in flight at the network.
 */
describe('on the Temporal server on PostgreSQL, with two workers', () => {
  const g = groupSeed();
  const originatorKey = createDidKeyRecord();
  const gatewayKey = createDidKeyRecord();
  const externalKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let first: RunningOrchestrator;
  let second: RunningOrchestrator;
  let external: NetworkClient;
  let gwToken: string;
  /** Set by a test: runs once, inside the next `POST /tx/create`, before the request leaves. */
  let onCreate: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    external = new NetworkClient(sb.networkConfig(g.externalUser));
    gwToken = await sb.token(g.gatewayUser);
    // One network client for both workers, so whichever picks up a transfer runs the test's hook.
    const network = new NetworkClient(sb.networkConfig(g.gatewayUser));
    (network as { api: NetworkClient['api'] }).api = network.api.extend({
      hooks: {
        beforeRequest: [
          async (request) => {
            if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/tx/create') && onCreate) {
              const run = onCreate;
              onCreate = undefined;
              await run();
            }
          },
        ],
      },
    });
    const options = {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex },
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
      ]),
      keystoreMasterKey: randomBytes(32).toString('base64'),
      networkClient: network,
      transfers: { pollIntervalMs: 300, answerDeadlineMs: 120_000 },
      incoming: {
        routeDeadline: '1m',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1m',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      addressBook: addressBookTestSettings(),
    };
    first = await startOrchestrator(sb.networkConfig(g.gatewayUser), options);
    second = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      ...options,
      pool: first.pool,
      taskQueue: first.taskQueue,
    });
    await external.api
      .post('tf/vasps/update', {
        json: { did: g.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: externalKey.did }] }] },
      })
      .json();
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    // The external VASP is simulated by the sandbox: it sends incoming transfers and answers outgoing ones by itself.
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${first.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    first.webhooks.notification[g.gateway] = hook.secret as string;
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await sb?.close();
  });

  async function sandboxCall(method: string, path: string, body?: unknown): Promise<Json> {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${gwToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await r.json()) as Json;
  }
  const api = async (o: RunningOrchestrator, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${o.apiUrl}${path}`, {
      method,
      headers: o.headers('admin', body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const transfer = (destination = `0x${randomBytes(20).toString('hex')}`) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000000',
    originatorVASPdid: g.subA,
    beneficiaryVASPdid: g.external,
    transactionBlockchainInfo: { destination },
    originator: fixture.originator,
    beneficiary: fixture.beneficiary,
  });
  const outgoing = (id: string, check: (s: TransferState) => boolean, timeoutMs = 60_000) =>
    eventually(
      async () => {
        const r = await fetch(`${second.apiUrl}/v1/transfers/${id}`, { headers: second.headers('viewer') });
        if (r.status !== 200) return undefined;
        const s = (await r.json()) as TransferState;
        return check(s) ? s : undefined;
      },
      timeoutMs,
      200,
    );
  /** What the network holds under a transfer's transactionRef (its id): one transaction, or a duplicate. */
  const atNetwork = async (ref: string) =>
    (await sb.pool.query<{ id: string }>('select id from transactions where transaction_ref = $1', [ref])).rows;

  it('outgoing: accepted through one API, read through the other, one transaction at the network', async () => {
    const id = randomUUID();
    const r = await fetch(`${first.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: first.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify(transfer()),
    });
    expect(r.status).toBe(202);
    // The counterparty is simulated by the sandbox: it confirms and accepts on its own.
    const done = await outgoing(id, (s) => s.final);
    expect(done).toMatchObject({
      status: 'ACCEPTED',
      mode: 'end-to-end',
      originatorVaspDid: g.subA,
      beneficiaryVaspDid: g.external,
    });
    expect(done.history.map((h) => h.status)).toEqual(expect.arrayContaining(['RECEIVED', 'SENT', 'ACCEPTED']));
    expect(await atNetwork(id)).toEqual([{ id: done.transactionId }]);
  });

  it('incoming: the notification webhook, the workflow routes by the registry, confirms and accepts', async () => {
    const address = evm(1, 'c1a5');
    expect(
      (
        await api(first, 'PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: 'cust-1' }],
        })
      ).status,
    ).toBe(200);
    const { id } = await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: address });
    const done = await eventually(
      async () => {
        const r = await api(second, 'GET', `/v1/incoming-transfers/${id}`);
        const s = r.status === 200 ? (r.body as IncomingStatus) : undefined;
        return s?.phase === 'completed' ? s : undefined;
      },
      60_000,
      200,
    );
    expect(done).toMatchObject({ networkStatus: 'ACCEPTED', subsidiaryDid: g.subA, routedBy: 'registry' });
    expect((await sandboxCall('GET', `/tx/info?id=${id}`)).status).toBe('ACCEPTED');
  });

  it('reconciliation: the registry reaches the subsidiary’s address book at the network', async () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({
      vaspDID: g.subB,
      asset: 'ETH',
      address: evm(i, 'c1b7'),
      customerRef: `b-${i}`,
    }));
    expect((await api(first, 'PUT', '/v1/addresses', { addresses: rows })).status).toBe(200);
    const { workflowId } = await startReconcile(first.target(), g.subB);
    const report = await followReconcile(second.target(), g.subB, workflowId, { intervalMs: 100, progress: false });
    expect(report).toMatchObject({ status: 'succeeded', desired: 12, added: 12, removed: 0, rejected: 0 });
    const book = await networkBook(sb, g.subB);
    expect(new Map(rows.map((r) => [r.address, r.customerRef]))).toEqual(book);
  });

  it('a restart of the Temporal server while a transfer is being created: it completes, created once at the network', async () => {
    const id = randomUUID();
    let restarted = false;
    onCreate = async () => {
      await restartTemporalServer();
      restarted = true;
    };
    const body = JSON.stringify(transfer());
    const r = await fetch(`${first.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: first.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body,
    });
    expect(r.status).toBe(202);
    const done = await outgoing(id, (s) => s.final, 120_000);
    expect(restarted).toBe(true);
    expect(done).toMatchObject({ status: 'ACCEPTED' });
    expect(await atNetwork(id)).toEqual([{ id: done.transactionId }]);
    // The same request again is the same transfer, not a second one.
    const again = await fetch(`${second.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: second.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body,
    });
    expect(again.status).toBeLessThan(300);
    expect(await atNetwork(id)).toHaveLength(1);
  });
});
