import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NetworkClient } from '../../network/client';
import { startOutgoingTransfer } from '../../client/transfers/start-outgoing';
import { createDidKeyRecord } from '../../lib/crypto';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as Record<
  string,
  unknown
>;

/**
 * Found by `npm run chaos` (docs/reliability.md): at the answer deadline the workflow cancels the transaction at the
 * network; the network's CANCELLED webhook could reach the workflow before the cancel activity's result did (a slow
 * answer, a worker killed after the cancel), and the transfer then ended CANCELLED instead of EXPIRED.
 */
describe("outgoing transfers: the deadline's own cancellation, reported by webhook first", () => {
  const group = groupSeed();
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sandbox = await startSandbox(group.seed, { faults: true });
    const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
    await external.api
      .post('tf/vasps/update', {
        json: {
          did: group.external,
          fields: [{ fieldName: 'pii_didkey', values: [{ value: createDidKeyRecord().did }] }],
        },
      })
      .json();
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      agentKeys: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: createDidKeyRecord().keys[0].privateKeyHex }]),
      transfers: { pollIntervalMs: 600_000, answerDeadlineMs: 60_000 },
    });
    const endpoint = 'race-suba';
    const registered = await orch.transfers.network.api
      .post('webhook', { json: { vaspDID: group.subA, url: `${orch.apiUrl}/webhooks/notification/${endpoint}` } })
      .json<{ secret: string }>();
    orch.webhooks.notification[endpoint] = registered.secret;
  });
  afterAll(async () => {
    await orch?.close();
    await sandbox?.close();
  });

  it("ends EXPIRED, not CANCELLED, when the CANCELLED webhook beats the cancel call's answer", async () => {
    // The network commits the cancellation (and sends its webhook) 4 s before the caller hears back.
    await sandbox.setFaults({ latency: { share: 1, ms: 4000, afterHandler: true, routes: ['POST /tx/cancel'] } });
    const key = randomUUID();
    const shortCtx = { ...orch.transfers, config: { ...orch.transfers.config, answerDeadlineMs: 2000 } };
    await startOutgoingTransfer({ temporal: orch.client, taskQueue: orch.taskQueue, transfers: shortCtx }, key, {
      body: {
        transactionAsset: 'ETH',
        transactionAmount: '1000',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: group.external,
        transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
        originator: fixture.originator,
        beneficiary: fixture.beneficiary,
      } as never,
      source: 'api',
      hybrid: false,
    });
    const done = await eventually(async () => {
      const r = await fetch(`${orch.apiUrl}/v1/transfers/${key}`, { headers: orch.headers('viewer') });
      const s = (await r.json()) as TransferState;
      return s.final ? s : undefined;
    }, 30_000);
    expect(done.status).toBe('EXPIRED');
    expect(done.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'EXPIRED']);
    expect(done.history.at(-1)!.source).toMatch(/^deadline: cancelled at the network/);
    // The control that the slow answer happened. At least once, not exactly: a local activity whose workflow task times
    // out on a starved machine runs again (Temporal's at-least-once), and a second cancel of a cancelled transaction is
    // harmless (it finds it settled).
    expect((await sandbox.injectedFaults()).latency).toBeGreaterThanOrEqual(1);
  });
});
