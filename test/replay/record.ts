/**
 * Records the histories the replay test (test/replay/replay.test.ts) replays: every workflow type of the worker, run
 * once against the real stack (Temporal dev server, PostgreSQL, the sandbox over HTTP, the project's worker and API,
 * as the integration harness starts them), written to test/fixtures/histories/. Run it when a workflow changes in a way
 * that running histories may not replay (then add a patch and keep the old fixtures, docs/workflow-versioning.md):
 * `npm run record:histories`.
 *
 * Payloads are encrypted with the fixtures' public codec key (test/replay/fixtures.ts); the data is synthetic and
 * every history is checked for personal data and key material before it is written.
 *
 * Arguments: the fixtures to record (default: all), and `--workflows-at=<git rev>`
 * with `--suffix=<.name>` to record with the workflow code of an older commit, today's activities around it: the
 * histories a patch's old branch must keep replaying (e.g. `--workflows-at=<commit>^ --suffix=.before-<patch id>`; docs/workflow-versioning.md).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createDataConverter } from '../../lib/temporal/data-converter';
import { NetworkClient } from '../../network/client';
import { createDidKeyRecord } from '../../lib/crypto';
import { generateWebhookSecret } from '../../lib/webhook-signature';
import { loadSdnList } from '../../screening/load-sdn';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { followReconcile, startReconcile } from '../../client/cli/addresses';
import {
  connectivityCheck,
  counterpartyReviewSync,
  incomingSweep,
  retentionSweep,
  scheduledKeyRotation,
} from '../../workflows';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import { transactionUpdatedSignal, type TransferState } from '../../workflows/outgoing-transfer.messages';
import globalSetup from '../harness/global-setup';
import globalTeardown from '../harness/global-teardown';
import { addressBookTestSettings, evm } from '../harness/address-book';
import { eventually, groupSeed, randomDid, startOrchestrator, startSandbox, testEnv } from '../harness/platform';
import { assertNoSecrets, FIXTURE_CODEC_KEYS, HISTORIES_DIR, historyToFixture } from './fixtures';

const ivms = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'pii-sdk', 'ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;
const SANCTIONS = resolve(__dirname, '../../data/sanctions');
const log = (line: string) => process.stderr.write(`[record] ${line}\n`);
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const wanted = new Set(args.filter((a) => !a.startsWith('--')));
const suffix = option('suffix') ?? '';
/** Whether to run a scenario: each is run only for the fixtures asked for (an older revision may not run the others). */
const want = (...names: string[]) => wanted.size === 0 || names.some((n) => wanted.has(n));

/** Every run of a workflow id, oldest first (continue-as-new chains included), each as `<name>[.<n>]<suffix>.json`. */
async function save(client: Client, name: string, workflowId: string, secrets: string[]): Promise<void> {
  if (wanted.size > 0 && !wanted.has(name)) return;
  const runs: { runId: string; json: unknown }[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    await assertNoSecrets(history, secrets);
    runs.unshift({ runId, json: historyToFixture(history) });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  runs.forEach((r, i) => {
    const file = join(HISTORIES_DIR, `${name}${runs.length > 1 ? `.${i + 1}` : ''}${suffix}.json`);
    writeFileSync(file, `${JSON.stringify(r.json, null, 1)}\n`);
    log(`${file} (${workflowId} ${r.runId})`);
  });
}

async function record(): Promise<void> {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  const g = groupSeed();
  const originatorKey = createDidKeyRecord();
  const gatewayKey = createDidKeyRecord();
  const externalKey = createDidKeyRecord();
  // A subsidiary of its own for the address book, whose book at the network starts empty (a first sync).
  const subC = randomDid();
  g.seed.vasps.push({ did: subC, name: 'Subsidiary C', parentDid: g.gateway });
  const subsidiaryDids = [g.subA, g.subB, subC];
  const incoming = {
    routeDeadline: '2s',
    routeGiveUpAfter: '1h',
    reviewDeadline: '2s',
    pollInterval: '2s',
    screeningThreshold: 0.85,
    sweepInterval: '1h',
    sweepMinAge: '0s',
  };
  const sb = await startSandbox(g.seed);
  // The custody system and the internal systems' TRANSFER_CALLBACK_URL: every callback acknowledged, so the histories
  // hold their activities and reports.
  const custody = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((done) => custody.listen(0, '127.0.0.1', done));
  const options = {
    group: { gatewayDid: g.gateway, subsidiaryDids },
    agentKeys: JSON.stringify([
      { vaspDID: g.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex },
      { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
    ]),
    transfers: {
      pollIntervalMs: 500,
      answerDeadlineMs: 60_000,
      callbackUrl: `http://127.0.0.1:${(custody.address() as AddressInfo).port}/callback`,
    },
    incoming,
    addressBook: addressBookTestSettings({ chunkRows: 20, chunksPerExecution: 2 }),
    walletProofs: { depositAddresses: { ethereum: `0x${'d0'.repeat(20)}` } },
    deposits: { recheckInitialMs: 1000, recheckMaxMs: 4000 },
    custody: {
      url: `http://127.0.0.1:${(custody.address() as AddressInfo).port}/custody`,
      secret: generateWebhookSecret(),
    },
    // Subsidiary A is in the EU: a transfer of 1 ETH to a self-hosted wallet needs the wallet's ownership proof.
    jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE' } },
  };
  const orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), options);
  let closed = false;
  const secrets = [originatorKey, gatewayKey, externalKey].map((k) => k.keys[0].privateKeyHex);
  const { client } = orch;
  try {
    const gwToken = await sb.token(g.gatewayUser);
    const sandboxCall = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${sb.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${gwToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await r.json()) as Json;
    };
    const api = async (
      method: string,
      path: string,
      body?: unknown,
      role: 'operator' | 'compliance' | 'admin' = 'admin',
      extra: Record<string, string> = {},
    ) => {
      const r = await fetch(`${orch.apiUrl}${path}`, {
        method,
        headers: orch.headers(role, {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extra,
        }),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Json };
    };
    /** A compliance officer approves the customer's screenshot of the wallet: the proof VERIFIED, its waiters woken. */
    const approvedScreenshot = async (customerRef: string, address: string) => {
      const proof = await api('POST', '/v1/wallet-proofs', {
        customerRef,
        asset: 'ETH',
        address,
        method: 'SCREENSHOT',
        vaspDid: g.subA,
      });
      if (proof.status !== 201) throw new Error(`wallet proof: ${proof.status} ${JSON.stringify(proof.body)}`);
      await api(
        'POST',
        `/v1/wallet-proofs/${proof.body.id}/review`,
        { decision: 'approve', reason: 'replay fixture' },
        'compliance',
      );
    };
    const register = async (vaspDID: string, addresses: string[]) => {
      const r = await api('PUT', '/v1/addresses', {
        addresses: addresses.map((address, i) => ({ vaspDID, asset: 'ETH', address, customerRef: `cust-${i}` })),
      });
      if (r.status !== 200) throw new Error(`PUT /v1/addresses: ${r.status} ${JSON.stringify(r.body)}`);
    };
    // The list entry says completed before the run closes: a fixture is saved once the run has closed, whole.
    const incomingClosed = (id: string) => client.workflow.getHandle(workflowIds.incomingTransfer(id)).result();
    const incomingStatus = (id: string, check: (s: IncomingStatus) => boolean) =>
      eventually(
        async () => {
          const r = await api('GET', `/v1/incoming-transfers/${id}`);
          return r.status === 200 && check(r.body as IncomingStatus) ? (r.body as IncomingStatus) : undefined;
        },
        60_000,
        200,
      );
    const outgoingStatus = (id: string, check: (s: TransferState) => boolean) =>
      eventually(
        async () => {
          const r = await api('GET', `/v1/transfers/${id}`);
          return r.status === 200 && check(r.body as TransferState) ? (r.body as TransferState) : undefined;
        },
        60_000,
        200,
      );
    const randomEvm = () => `0x${randomBytes(20).toString('hex')}`;

    // The network side: the counterparty's and the gateway's keys published.
    const external = new NetworkClient(sb.networkConfig(g.externalUser));
    await external.api
      .post('tf/vasps/update', {
        json: { did: g.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: externalKey.did }] }] },
      })
      .json();
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    // Outgoing, before the sandbox answers for the counterparty: it confirms and accepts by hand (found by polling).
    const post = (id: string) =>
      api(
        'POST',
        '/v1/transfers',
        {
          transactionAsset: 'ETH',
          transactionAmount: '1000000000000000000',
          originatorVASPdid: g.subA,
          beneficiaryVASPdid: g.external,
          transactionBlockchainInfo: { destination: randomEvm() },
          originator: ivms.originator,
          beneficiary: ivms.beneficiary,
        },
        'operator',
        { 'idempotency-key': id },
      );
    if (want('outgoing-transfer-accepted')) {
      const accepted = randomUUID();
      if ((await post(accepted)).status !== 202) throw new Error('POST /v1/transfers refused');
      const sent = await outgoingStatus(accepted, (s) => s.status === 'SENT' && !!s.transactionId);
      await external.api.post('tx/confirm', { searchParams: { id: sent.transactionId! } }).json();
      await external.api.post('tx/accept', { searchParams: { id: sent.transactionId! } }).json();
      await outgoingStatus(accepted, (s) => s.final);
      await save(client, 'outgoing-transfer-accepted', workflowIds.outgoingTransfer(accepted), secrets);
    }

    // Outgoing: a redelivered SENT webhook arrives after the counterparty's ACK (older updatedAt) and is ignored.
    if (want('outgoing-transfer-out-of-order')) {
      const id = randomUUID();
      if ((await post(id)).status !== 202) throw new Error('POST /v1/transfers refused');
      const sent = await outgoingStatus(id, (s) => s.status === 'SENT' && !!s.transactionId);
      const confirmed = await external.api
        .post('tx/confirm', { searchParams: { id: sent.transactionId! } })
        .json<{ updatedAt: string }>();
      await outgoingStatus(id, (s) => s.status === 'ACK');
      await client.workflow.getHandle(workflowIds.outgoingTransfer(id)).signal(transactionUpdatedSignal, {
        transactionId: sent.transactionId!,
        status: 'SENT',
        source: 'webhook',
        webhookId: 'msg_replay_fixture_late_sent',
        updatedAt: new Date(Date.parse(confirmed.updatedAt) - 1000).toISOString(),
      });
      await new Promise((r) => setTimeout(r, 1000));
      const held = await outgoingStatus(id, () => true);
      if (!option('workflows-at') && held.status !== 'ACK')
        throw new Error(`the late SENT moved the transfer to ${held.status}`);
      await external.api.post('tx/accept', { searchParams: { id: sent.transactionId! } }).json();
      await outgoingStatus(id, (s) => s.final);
      await save(client, 'outgoing-transfer-out-of-order', workflowIds.outgoingTransfer(id), secrets);
    }

    // Outgoing: nobody answers before the deadline; the transaction is cancelled at the network.
    if (want('outgoing-transfer-expired')) {
      orch.transfers.config.answerDeadlineMs = 2000;
      const expired = randomUUID();
      if ((await post(expired)).status !== 202) throw new Error('POST /v1/transfers refused');
      const ended = await outgoingStatus(expired, (s) => s.final);
      if (ended.status !== 'EXPIRED') throw new Error(`the transfer meant to expire ended ${ended.status}`);
      await save(client, 'outgoing-transfer-expired', workflowIds.outgoingTransfer(expired), secrets);
    }

    // Outgoing to a self-hosted wallet with no proof: AWAITING_PROOF until a compliance officer approves the customer's
    // screenshot; then created with the proof, and (no VASP answers for a wallet) expired at the deadline.
    if (want('outgoing-transfer-awaiting-proof')) {
      const deadline = orch.transfers.config.answerDeadlineMs;
      orch.transfers.config.answerDeadlineMs = 15_000;
      const id = randomUUID();
      const wallet = `0x${'b2'.repeat(20)}`;
      const r = await api(
        'POST',
        '/v1/transfers',
        {
          transactionAsset: 'ETH',
          transactionAmount: '1000000000000000000',
          originatorVASPdid: g.subA,
          originatorRef: 'replay-proof',
          isNonCustodial: true,
          transactionBlockchainInfo: { destination: wallet },
          originator: ivms.originator,
          beneficiary: ivms.beneficiary,
        },
        'operator',
        { 'idempotency-key': id },
      );
      if (r.status !== 202) throw new Error(`POST /v1/transfers refused: ${JSON.stringify(r.body)}`);
      await outgoingStatus(id, (s) => s.status === 'AWAITING_PROOF');
      await approvedScreenshot('replay-proof', wallet);
      const ended = await outgoingStatus(id, (s) => s.final);
      if (!ended.transactionId) throw new Error(`the transfer ended ${ended.status} without its transaction`);
      await save(client, 'outgoing-transfer-awaiting-proof', workflowIds.outgoingTransfer(id), secrets);
      orch.transfers.config.answerDeadlineMs = deadline;
    }

    // From here on the sandbox plays the counterparty that sends transfers to the gateway.
    await sb.simulateCounterparty(g.external);
    await loadSdnList(orch.pool, {
      list: 'replay-fixtures',
      sdnPath: `${SANCTIONS}/sdn-sample.csv`,
      altPath: `${SANCTIONS}/alt-sample.csv`,
    });

    // Incoming, before the gateway's webhook exists: only the sweep can start it (a child workflow), registry-routed.
    if (want('incoming-sweep', 'incoming-transfer-registry-accepted')) {
      const swept = randomEvm();
      await register(g.subA, [swept]);
      const sweptId = (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: swept })).id;
      await client.workflow.execute(incomingSweep, {
        taskQueue: orch.taskQueue,
        workflowId: 'incoming-sweep-replay',
        args: [{ transfer: { gatewayDid: g.gateway, subsidiaryDids, ...incoming }, minAge: '0s', limit: 100 }],
      });
      await save(client, 'incoming-sweep', 'incoming-sweep-replay', secrets);
      await incomingClosed(sweptId);
      await save(client, 'incoming-transfer-registry-accepted', workflowIds.incomingTransfer(sweptId), secrets);
    }

    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;

    // Incoming: a sanctions hit held for review, escalated at the review deadline, declined by a compliance officer.
    if (want('incoming-transfer-review-escalated-declined')) {
      const flagged = randomEvm();
      await register(g.subA, [flagged]);
      const flaggedId = (
        await simulateTransfer(sb, {
          from: g.external,
          to: g.gateway,
          destination: flagged,
          originatorName: ['Vanya', 'Petrov'],
        })
      ).id;
      await incomingStatus(flaggedId, (s) => s.phase === 'awaiting-review' && s.escalated);
      const decided = await api(
        'POST',
        `/v1/transfers/${flaggedId}/decision`,
        { decision: 'decline', reason: 'confirmed match' },
        'compliance',
      );
      if (decided.status !== 200) throw new Error(`decision: ${decided.status} ${JSON.stringify(decided.body)}`);
      await incomingClosed(flaggedId);
      await save(
        client,
        'incoming-transfer-review-escalated-declined',
        workflowIds.incomingTransfer(flaggedId),
        secrets,
      );
    }

    // Incoming: nobody owns the address; a person routes it after the route deadline escalated it.
    if (want('incoming-transfer-routed-by-person')) {
      const unowned = randomEvm();
      const unownedId = (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: unowned })).id;
      await incomingStatus(unownedId, (s) => s.phase === 'awaiting-route' && s.escalated);
      const routed = await api(
        'POST',
        `/v1/transfers/${unownedId}/route`,
        { subsidiaryDid: g.subB, reason: 'customer ticket 42' },
        'compliance',
      );
      if (routed.status !== 200) throw new Error(`route: ${routed.status} ${JSON.stringify(routed.body)}`);
      await incomingClosed(unownedId);
      await save(client, 'incoming-transfer-routed-by-person', workflowIds.incomingTransfer(unownedId), secrets);
    }

    // Key rotation through the API, and the scheduled one (a child workflow under the per-VASP id).
    if (want('key-rotation', 'scheduled-key-rotation', 'key-rotation-scheduled-child')) {
      const rotated = await api(
        'POST',
        `/v1/vasps/${encodeURIComponent(g.subA)}/keys/rotate`,
        { reason: 'replay fixture' },
        'operator',
      );
      if (rotated.status !== 202 && rotated.status !== 200)
        throw new Error(`rotate: ${rotated.status} ${JSON.stringify(rotated.body)}`);
      await client.workflow.getHandle(workflowIds.keyRotation(g.subA)).result();
      await save(client, 'key-rotation', workflowIds.keyRotation(g.subA), secrets);
      await client.workflow.execute(scheduledKeyRotation, {
        taskQueue: orch.taskQueue,
        workflowId: workflowIds.scheduledKeyRotation(g.subB),
        args: [{ vaspDid: g.subB }],
      });
      await save(client, 'scheduled-key-rotation', workflowIds.scheduledKeyRotation(g.subB), secrets);
      await save(client, 'key-rotation-scheduled-child', workflowIds.keyRotation(g.subB), secrets);
    }
    // Address book: a first full sync by upload (head first, continued as new), then a small delta registered.
    if (want('address-book-first-sync', 'address-book-delta')) {
      await register(
        subC,
        Array.from({ length: 60 }, (_, i) => evm(i, 'fe')),
      );
      const first = await startReconcile(orch.target('operator'), subC, 'full');
      await followReconcile(orch.target('operator'), subC, first.workflowId, { intervalMs: 200, progress: false });
      await save(client, 'address-book-first-sync', first.workflowId, secrets);
      await register(subC, [evm(100, 'fe'), evm(101, 'fe')]);
      const second = await startReconcile(orch.target('operator'), subC, 'auto');
      await followReconcile(orch.target('operator'), subC, second.workflowId, { intervalMs: 200, progress: false });
      await save(client, 'address-book-delta', second.workflowId, secrets);
    }

    // Retention and the connectivity check.
    if (want('retention-sweep', 'connectivity-check')) {
      await client.workflow.execute(retentionSweep, {
        taskQueue: orch.taskQueue,
        workflowId: 'retention-replay',
        args: [{ webhookDays: 30, transferPiiDays: 365 }],
      });
      await save(client, 'retention-sweep', 'retention-replay', secrets);
      await client.workflow.execute(connectivityCheck, {
        taskQueue: orch.taskQueue,
        workflowId: 'connectivity-check-replay',
      });
      await save(client, 'connectivity-check', 'connectivity-check-replay', secrets);
    }

    // Counterparty reviews: one review of the group's, pushed and read back by the reconciliation.
    if (want('counterparty-review-sync')) {
      const put = await fetch(`${orch.apiUrl}/v1/counterparties/${encodeURIComponent(g.external)}`, {
        method: 'PUT',
        headers: orch.headers('compliance', { 'content-type': 'application/json' }),
        body: JSON.stringify({ reviewValue: 'TRUSTED', note: 'replay fixture' }),
      });
      if (put.status !== 200) throw new Error(`review: ${put.status} ${await put.text()}`);
      await client.workflow.execute(counterpartyReviewSync, {
        taskQueue: orch.taskQueue,
        workflowId: 'counterparty-review-sync-replay',
        args: [{ trigger: 'api', vaspDids: [g.gateway, ...subsidiaryDids] }],
      });
      await save(client, 'counterparty-review-sync', 'counterparty-review-sync-replay', secrets);
    }

    // Wallet proofs: a screenshot a compliance officer approves; a small deposit, first of a wrong amount (noted, still
    // pending), then of the test's amount from the wallet.
    if (want('wallet-proof-screenshot-approved', 'wallet-proof-deposit-verified')) {
      const start = async (method: string) => {
        const r = await api('POST', '/v1/wallet-proofs', {
          customerRef: `replay-${method.toLowerCase()}`,
          asset: 'ETH',
          address: `0x${'a1'.repeat(20)}`,
          method,
          vaspDid: g.subA,
        });
        if (r.status !== 201) throw new Error(`wallet proof: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      };
      const shot = await start('SCREENSHOT');
      const approved = await api(
        'POST',
        `/v1/wallet-proofs/${shot.id}/review`,
        { decision: 'approve', reason: 'replay fixture' },
        'compliance',
      );
      if (approved.status !== 200) throw new Error(`review: ${approved.status} ${JSON.stringify(approved.body)}`);
      await client.workflow.getHandle(workflowIds.walletProof(shot.id)).result();
      await save(client, 'wallet-proof-screenshot-approved', workflowIds.walletProof(shot.id), secrets);

      const test = await start('SMALL_DEPOSIT');
      const deposit = test.instructions.deposit as { amount: string };
      const seen = (amount: string) =>
        api('POST', `/v1/wallet-proofs/${test.id}/deposit-observed`, {
          txHash: `0x${'cd'.repeat(32)}`,
          from: `0x${'a1'.repeat(20)}`,
          amount,
        });
      await seen((BigInt(deposit.amount) + 1n).toString());
      const verified = await seen(deposit.amount);
      if (verified.body.status !== 'VERIFIED') throw new Error(`deposit: ${JSON.stringify(verified.body)}`);
      await client.workflow.getHandle(workflowIds.walletProof(test.id)).result();
      await save(client, 'wallet-proof-deposit-verified', workflowIds.walletProof(test.id), secrets);
    }

    // Policies: subsidiary A's own policy holds its outgoing transfers for a person and tells the network NOT_READY
    // for its incoming ones; a compliance officer releases the one and approves the other.
    if (want('outgoing-transfer-policy-held-released', 'incoming-transfer-policy-not-ready')) {
      const policy = await api(
        'PUT',
        `/v1/policies/${encodeURIComponent(g.subA)}`,
        {
          currency: 'USD',
          incoming: [{ order: 1, actionRule: 'NOT_READY', ruleCheck: 'ALL', ruleValue: '' }],
          outgoing: [{ order: 1, actionRule: 'SEND_TO_INBOX', ruleCheck: 'ALL', ruleValue: '' }],
          note: 'replay fixture',
        },
        'compliance',
      );
      if (policy.status !== 200) throw new Error(`policy: ${policy.status} ${JSON.stringify(policy.body)}`);
      orch.transfers.config.answerDeadlineMs = 60_000;
      const held = randomUUID();
      if ((await post(held)).status !== 202) throw new Error('POST /v1/transfers refused');
      await outgoingStatus(held, (s) => s.status === 'HELD');
      const released = await api(
        'POST',
        `/v1/transfers/${held}/review`,
        { decision: 'release', reason: 'replay fixture' },
        'compliance',
      );
      if (released.status !== 200) throw new Error(`release: ${released.status} ${JSON.stringify(released.body)}`);
      await outgoingStatus(held, (s) => s.final);
      await save(client, 'outgoing-transfer-policy-held-released', workflowIds.outgoingTransfer(held), secrets);

      const address = randomEvm();
      await register(g.subA, [address]);
      const id = (await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: address })).id;
      await incomingStatus(id, (s) => s.phase === 'awaiting-review');
      const approved = await api(
        'POST',
        `/v1/transfers/${id}/decision`,
        { decision: 'approve', reason: 'replay fixture' },
        'compliance',
      );
      if (approved.status !== 200) throw new Error(`decision: ${approved.status} ${JSON.stringify(approved.body)}`);
      await incomingClosed(id);
      await save(client, 'incoming-transfer-policy-not-ready', workflowIds.incomingTransfer(id), secrets);
    }

    /**
     * Deposits reported before the originator's transfer (the network answers an INCOMPLETE message, AWAITING_DATA):
     * the sandbox's simulated originator completes it seconds later, the group accepts it, the deposit is RELEASED.
     */
    const recordLateDeposit = async (name: string, hashByte: string) => {
      await sandboxCall('POST', '/tf/vasps/update', {
        did: g.subA,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: originatorKey.did }] }],
      });
      const to = randomEvm();
      await register(g.subA, [to]);
      const late = await fetch(`${sb.url}/sandbox/counterparties/${g.external}/deposits`, {
        method: 'PUT',
        headers: sb.testHeaders({ 'content-type': 'application/json' }),
        body: JSON.stringify({ [to]: { afterSeconds: 3 } }),
      });
      if (late.status !== 200) throw new Error(`simulated originator: ${late.status}`);
      const reported = await api(
        'POST',
        '/v1/deposits',
        { vaspDid: g.subA, asset: 'ETH', txHash: `0x${hashByte.repeat(32)}`, to, amount: '1500000000000000000' },
        'operator',
      );
      if (reported.status !== 201) throw new Error(`deposit: ${reported.status} ${JSON.stringify(reported.body)}`);
      const state = await client.workflow.getHandle(workflowIds.deposit(reported.body.id)).result();
      if (state.status !== 'RELEASED') throw new Error(`the deposit ended ${state.status}`);
      await save(client, name, workflowIds.deposit(reported.body.id), secrets);
    };
    if (want('deposit-awaiting-data-released')) await recordLateDeposit('deposit-awaiting-data-released', 'de');
    // The same where no custody callback URL is configured: decided without the callback's activity.
    if (want('deposit-released-without-callback')) {
      orch.deposits.custodyCallbacks = false;
      try {
        await recordLateDeposit('deposit-released-without-callback', 'dc');
      } finally {
        orch.deposits.custodyCallbacks = true;
      }
    }

    // Deposits from a self-hosted wallet above subsidiary A's EU proof threshold: AWAITING_PROOF, woken by
    // walletProofVerifiedSignal when a compliance officer approves the customer's screenshot, then RELEASED.
    if (want('deposit-awaiting-proof-released')) {
      const to = randomEvm();
      const wallet = `0x${'b3'.repeat(20)}`;
      await register(g.subA, [to]);
      const reported = await api(
        'POST',
        '/v1/deposits',
        {
          vaspDid: g.subA,
          asset: 'ETH',
          txHash: `0x${'df'.repeat(32)}`,
          to,
          from: wallet,
          fromSelfHosted: true,
          customerRef: 'replay-deposit-proof',
          amount: '1500000000000000000',
        },
        'operator',
      );
      if (reported.status !== 201) throw new Error(`deposit: ${reported.status} ${JSON.stringify(reported.body)}`);
      await eventually(async () => {
        const d = await api('GET', `/v1/deposits/${reported.body.id}`);
        return d.body.status === 'AWAITING_PROOF' ? true : undefined;
      });
      await approvedScreenshot('replay-deposit-proof', wallet);
      const state = await client.workflow.getHandle(workflowIds.deposit(reported.body.id)).result();
      if (state.status !== 'RELEASED') throw new Error(`the deposit ended ${state.status}`);
      await save(client, 'deposit-awaiting-proof-released', workflowIds.deposit(reported.body.id), secrets);
    }

    // Deposits: an originator that never answers (AWAITING_DATA); a compliance officer requires the return (an update),
    // deposit.return is called back, and the custody system's confirmation (a signal) ends the wait as RETURNED.
    if (want('deposit-returned-confirmed')) {
      const to = randomEvm();
      await register(g.subA, [to]);
      const never = await fetch(`${sb.url}/sandbox/counterparties/${g.external}/deposits`, {
        method: 'PUT',
        headers: sb.testHeaders({ 'content-type': 'application/json' }),
        body: JSON.stringify({ [to]: 'never' }),
      });
      if (never.status !== 200) throw new Error(`simulated originator: ${never.status}`);
      const reported = await api(
        'POST',
        '/v1/deposits',
        {
          vaspDid: g.subA,
          asset: 'ETH',
          txHash: `0x${'dd'.repeat(32)}`,
          to,
          from: `0x${'b4'.repeat(20)}`,
          amount: '1500000000000000000',
        },
        'operator',
      );
      if (reported.status !== 201) throw new Error(`deposit: ${reported.status} ${JSON.stringify(reported.body)}`);
      const id = reported.body.id as string;
      await eventually(async () => {
        const d = await api('GET', `/v1/deposits/${id}`);
        return d.body.status === 'AWAITING_DATA' ? true : undefined;
      });
      const decided = await api(
        'POST',
        `/v1/deposits/${id}/decision`,
        { decision: 'return', reason: 'no Travel Rule data' },
        'compliance',
      );
      if (decided.status !== 200) throw new Error(`decision: ${decided.status} ${JSON.stringify(decided.body)}`);
      const confirmed = await api(
        'POST',
        `/v1/deposits/${id}/returned`,
        { txHash: `0x${'dc'.repeat(32)}` },
        'operator',
      );
      if (confirmed.status !== 200) throw new Error(`returned: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
      const state = await client.workflow.getHandle(workflowIds.deposit(id)).result();
      if (state.status !== 'RETURNED') throw new Error(`the deposit ended ${state.status}`);
      await save(client, 'deposit-returned-confirmed', workflowIds.deposit(id), secrets);
    }

    // Outgoing: the deadline passes while no worker runs, and the network's CANCELLED webhook is there first; the next
    // worker hears both in one activation, the signal first, and the transfer ends EXPIRED (the deadline's own).
    if (want('outgoing-transfer-cancelled-after-deadline')) {
      orch.transfers.config.answerDeadlineMs = 3000;
      const late = randomUUID();
      if ((await post(late)).status !== 202) throw new Error('POST /v1/transfers refused');
      const lateSent = await outgoingStatus(late, (s) => !!s.transactionId);
      await orch.close();
      closed = true;
      await new Promise((r) => setTimeout(r, 4000));
      const connection = await Connection.connect({ address: testEnv().temporalAddress });
      await new Client({ connection, dataConverter: createDataConverter(testEnv().keyring) }).workflow
        .getHandle(workflowIds.outgoingTransfer(late))
        .signal(transactionUpdatedSignal, {
          transactionId: lateSent.transactionId!,
          status: 'CANCELLED',
          source: 'webhook',
          webhookId: 'msg_replay_fixture',
        });
      await connection.close();
      const next = await startOrchestrator(sb.networkConfig(g.gatewayUser), { ...options, taskQueue: orch.taskQueue });
      try {
        const lateState = await next.client.workflow.getHandle(workflowIds.outgoingTransfer(late)).result();
        // An older revision's history (--workflows-at) is recorded however it ends.
        if (!option('workflows-at') && lateState.status !== 'EXPIRED')
          throw new Error(`the transfer cancelled after its deadline ended ${lateState.status}`);
        await save(
          next.client,
          'outgoing-transfer-cancelled-after-deadline',
          workflowIds.outgoingTransfer(late),
          secrets,
        );
      } finally {
        await next.close();
      }
    }
  } finally {
    if (!closed) await orch.close();
    await sb.close();
    custody.close();
  }
}

/** A workflow bundle of `workflows/` as it was at a git revision (with that revision's lib/), for `--workflows-at`. */
async function bundleAt(rev: string): Promise<{ path: string; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'tro-workflows-at-'));
  const root = resolve(__dirname, '../..');
  const archive = spawnSync('git', ['archive', '--format=tar', rev], { cwd: root, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${rev}: ${archive.stderr.toString()}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr.toString()}`);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  const bundle = await bundleWorkflowCode({
    workflowsPath: join(dir, 'workflows'),
    failureConverterPath: require.resolve('../../lib/temporal/failure-converter'),
  });
  const path = join(dir, 'bundle.js');
  writeFileSync(path, bundle.code);
  log(`workflows of ${rev} bundled`);
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function main(): Promise<void> {
  await globalSetup();
  // After the setup, which drew a random key for the run: the fixtures' own key instead.
  process.env.TEST_CODEC_KEYS = FIXTURE_CODEC_KEYS;
  const rev = option('workflows-at');
  const old = rev ? await bundleAt(rev) : undefined;
  if (old) process.env.TEST_WORKFLOW_BUNDLE = old.path;
  try {
    await record();
  } finally {
    old?.cleanup();
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
