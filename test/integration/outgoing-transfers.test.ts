// Longer than 400 lines on purpose: every case shares one sandbox, orchestrator, callback server and registered
// webhook (beforeAll), and splitting the file would start them again for each part.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NetworkClient } from '../../network/client';
import { planTransfer } from '../../outgoing/plan';
import type { NetworkTransaction } from '../../network/transactions';
import { startOutgoingTransfer } from '../../client/transfers/start-outgoing';
import { runTransferDirect } from '../../outgoing/transaction';
import { createDidKeyRecord, Keyring, type DidKeyRecord } from '../../lib/crypto';
import { decryptIvms101, flattenIvms101 } from '../../lib/ivms101';
import { webhookHeaders } from '../../lib/webhook-signature';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/callback-receiver';
import { EncryptionCodec } from '../../lib/temporal/codec';
import type { Payload } from '@temporalio/common';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/pii-sdk/ivms101-40-fields.json`, 'utf8')) as {
  originator: Record<string, unknown>;
  beneficiary: Record<string, unknown>;
};

const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('outgoing transfers: API, workflow, encryption modes, webhooks (issue #5)', () => {
  const group = groupSeed();
  const keyless = randomDid();
  const simulated = randomDid();
  group.seed.vasps.push(
    { did: keyless, name: 'Keyless VASP' },
    { did: simulated, name: 'Simulated VASP', simulated: true },
  );
  const originatorKey = createDidKeyRecord();
  const externalKey = createDidKeyRecord();
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;
  let external: NetworkClient;
  let receiver: CallbackReceiver;

  beforeAll(async () => {
    receiver = await startCallbackReceiver();
    sandbox = await startSandbox(group.seed);
    external = new NetworkClient(sandbox.networkConfig(group.externalUser));
    // The counterparty publishes its key; our originator's key is configured as the agent's KEYS.
    await external.api
      .post('tf/vasps/update', {
        json: { did: group.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: externalKey.did }] }] },
      })
      .json();
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      agentKeys: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]),
      transfers: {
        pollIntervalMs: 300,
        answerDeadlineMs: 60_000,
        callbackUrl: receiver.url,
      },
      webhooks: { notification: { [group.subA]: WEBHOOK_SECRET } },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sandbox?.close();
    await receiver?.close();
  });

  const body = (over: Record<string, unknown> = {}) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
    originator: fixture.originator,
    beneficiary: fixture.beneficiary,
    ...over,
  });

  const post = (payload: unknown, key: string = randomUUID(), query = '') =>
    fetch(`${orch.apiUrl}/v1/transfers${query}`, {
      method: 'POST',
      headers: orch.headers('operator', {
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      }),
      body: JSON.stringify(payload),
    });

  const state = async (id: string) =>
    (await (
      await fetch(`${orch.apiUrl}/v1/transfers/${id}`, { headers: orch.headers('viewer') })
    ).json()) as TransferState;
  const until = (id: string, check: (s: TransferState) => boolean, timeoutMs = 20_000) =>
    eventually(async () => {
      const r = await fetch(`${orch.apiUrl}/v1/transfers/${id}`, { headers: orch.headers('viewer') });
      if (r.status !== 200) return undefined;
      const s = (await r.json()) as TransferState;
      return check(s) ? s : undefined;
    }, timeoutMs);

  /** What the counterparty reads with its own credentials and key. */
  async function readAsCounterparty(transactionId: string, key: DidKeyRecord) {
    const tx = await external.api.get('tx/info', { searchParams: { id: transactionId } }).json<NetworkTransaction>();
    const refs = flattenIvms101(tx.pii);
    const items = await external.pii
      .post('get', { json: refs.map((r) => r.value) })
      .json<{ cid: string; data: string }[]>();
    const entries = items.map((i) => JSON.parse(i.data) as { key: string; value: string });
    return { tx, entries, record: decryptIvms101(entries, Keyring.from([key])).record };
  }

  const recipientsOf = (jwe: string) =>
    (JSON.parse(jwe) as { recipients: { header: { kid: string } }[] }).recipients.map(
      (r) => r.header.kid.split('#')[0],
    );

  const transactionsWithRef = async (ref: string) =>
    (await sandbox.pool.query('select id from transactions where transaction_ref = $1', [ref])).rowCount;

  it('end-to-end: encrypts for originator and beneficiary, the counterparty reads it, its answer ends the transfer', async () => {
    const key = randomUUID();
    const r = await post(body(), key);
    expect(r.status).toBe(202);
    expect(await r.json()).toMatchObject({ id: key, workflowId: `outgoing-${key}`, status: 'RECEIVED' });

    const sent = await until(key, (s) => !!s.transactionId && s.status === 'SENT');
    expect(sent).toMatchObject({
      mode: 'end-to-end',
      originatorVaspDid: group.subA,
      beneficiaryVaspDid: group.external,
      final: false,
    });

    // The counterparty decrypts every value with its own key.
    const { tx, entries, record } = await readAsCounterparty(sent.transactionId!, externalKey);
    expect(tx.transactionRef).toBe(key);
    expect(record).toEqual({ originator: fixture.originator, beneficiary: fixture.beneficiary });
    expect(recipientsOf(entries[0]!.value)).toEqual([originatorKey.did, externalKey.did]);

    // The originator reads it back decrypted through the agent-compatible endpoint.
    const info = await fetch(`${orch.apiUrl}/tx/info?id=${sent.transactionId}&vaspDID=${group.subA}`, {
      headers: orch.headers('compliance'),
    });
    expect(info.status).toBe(200);
    expect(((await info.json()) as NetworkTransaction).ivms101).toEqual({
      originator: fixture.originator,
      beneficiary: fixture.beneficiary,
    });

    // The counterparty confirms and accepts; no webhook is registered, so polling finds it.
    await external.api.post('tx/confirm', { searchParams: { id: sent.transactionId! } }).json();
    await external.api.post('tx/accept', { searchParams: { id: sent.transactionId! } }).json();
    const done = await until(key, (s) => s.final);
    expect(done.status).toBe('ACCEPTED');
    expect(done.history.map((h) => h.status)).toEqual(
      ['RECEIVED', 'PREPARED', 'SENT', 'ACK', 'ACCEPTED'].filter((s) => done.history.some((h) => h.status === s)),
    );
    expect(done.history.at(-1)!.source).toBe('poll');

    // The final status is reported to the internal callback.
    const report = await eventually(async () => receiver.received().find((c) => c.id === key));
    expect(report).toMatchObject({
      id: key,
      status: 'ACCEPTED',
      transactionId: sent.transactionId,
      mode: 'end-to-end',
    });
  });

  it("keeps the network's transaction unique: a transactionRef already created with the same request answers the existing transaction, which the transfer adopts; another request under it fails the transfer at once (issue 15, item 14)", async () => {
    const key = randomUUID();
    const payload = body();
    // As if a previous attempt had stored the personal data and created the transaction before the worker died.
    const existing = await runTransferDirect(orch.transfers, key, {
      body: payload as never,
      source: 'api',
      hybrid: false,
    });
    expect((await post(payload, key)).status).toBe(202);
    const s = await until(key, (t) => !!t.transactionId);
    expect(s.transactionId).toBe(existing.id);
    expect(await transactionsWithRef(key)).toBe(1);
    // Search attributes for operators: status, originating subsidiary, asset.
    const { searchAttributes } = await orch.client.workflow.getHandle(`outgoing-${key}`).describe();
    expect(searchAttributes).toMatchObject({
      SubsidiaryVaspDid: [group.subA],
      Asset: ['ETH'],
      TransferStatus: [s.status],
    });

    // The reference taken by a different transaction: the network refuses (422), for good, and nothing is created.
    const taken = randomUUID();
    const { originator: _o, beneficiary: _b, ...plain } = payload;
    await orch.transfers.network.api.post('tx/create', { json: { ...plain, transactionRef: taken } }).json();
    expect((await post(payload, taken)).status).toBe(202);
    const failed = await until(taken, (t) => t.final);
    expect(failed).toMatchObject({ status: 'FAILED', error: { type: 'UpstreamRejectedError' } });
    expect(failed.error!.message).toMatch(/422.*transactionRef/);
    expect(await transactionsWithRef(taken)).toBe(1);
  });

  it("resolves the beneficiary VASP from the destination address's owner when none is named", async () => {
    const destination = `0x${randomBytes(20).toString('hex')}`;
    await external.api.post('address/registerCustomer', {
      json: { vaspDID: group.external, asset: 'ETH', address: destination, customerRef: 'c-1' },
    });
    const key = randomUUID();
    const { beneficiaryVASPdid: _none, ...payload } = body({ transactionBlockchainInfo: { destination } });
    expect((await post(payload, key)).status).toBe(202);
    const s = await until(key, (t) => !!t.transactionId);
    expect(s).toMatchObject({ beneficiaryVaspDid: group.external, mode: 'end-to-end' });
    expect((await readAsCounterparty(s.transactionId!, externalKey)).record.originator).toEqual(fixture.originator);
  });

  it('keeps personal data out of workflow history, even once the codec has decrypted it', async () => {
    const key = randomUUID();
    expect((await post(body(), key)).status).toBe(202);
    await until(key, (t) => !!t.transactionId);
    const history = await orch.client.workflow.getHandle(`outgoing-${key}`).fetchHistory();
    const payloads: Payload[] = [];
    const walk = (v: unknown): void => {
      if (!v || typeof v !== 'object' || v instanceof Uint8Array) return;
      const o = v as Record<string, unknown>;
      if ('metadata' in o && 'data' in o && o.metadata && typeof o.metadata === 'object') payloads.push(o as Payload);
      else Object.values(o).forEach(walk);
    };
    walk(history.events);
    expect(payloads.length).toBeGreaterThan(3);
    const plain = Buffer.concat(
      (await new EncryptionCodec(testEnv().keyring).decode(payloads)).map((p) =>
        Buffer.from(p.data ?? new Uint8Array()),
      ),
    );
    expect(plain.includes(Buffer.from(key))).toBe(true); // the reference is there …
    for (const secret of ['Baggins', 'Gamgee', 'Hobbiton', 'AABBCCDDEEFF0011223344', '1968-09-22'])
      expect(plain.includes(Buffer.from(secret))).toBe(false); // … the data is not
  });

  it("hybrid: adds the originator's service-managed escrow key between sender and counterparty", async () => {
    const key = randomUUID();
    expect((await post(body(), key, '?hybrid=1')).status).toBe(202);
    const sent = await until(key, (s) => !!s.transactionId);
    expect(sent.mode).toBe('hybrid');
    const escrow = await orch.transfers.network.pii
      .get('get-escrow-didkey', { searchParams: { vaspDID: group.subA } })
      .json<{ did: string }>();
    const { entries, record } = await readAsCounterparty(sent.transactionId!, externalKey);
    expect(recipientsOf(entries[0]!.value)).toEqual([originatorKey.did, escrow.did, externalKey.did]);
    expect(record.originator).toEqual(fixture.originator);
  });

  it("no beneficiary key: encrypts for the originator only; with TRANSFER_NO_KEY_MODE=escrow, to the beneficiary's escrow key", async () => {
    const key = randomUUID();
    expect((await post(body({ beneficiaryVASPdid: keyless }), key)).status).toBe(202);
    const sent = await until(key, (s) => !!s.transactionId);
    expect(sent.mode).toBe('originator-only');
    const row = await orch.transfers.store.get(key);
    expect(row.pii!.recipients).toEqual([originatorKey.did]);
    // The originator can still read its own data.
    const info = (await (
      await fetch(`${orch.apiUrl}/tx/info?id=${sent.transactionId}&vaspDID=${group.subA}`, {
        headers: orch.headers('compliance'),
      })
    ).json()) as NetworkTransaction;
    expect(info.ivms101).toEqual({ originator: fixture.originator, beneficiary: fixture.beneficiary });

    const escrowCtx = { ...orch.transfers, config: { ...orch.transfers.config, noKeyMode: 'escrow' as const } };
    const plan = await planTransfer(escrowCtx, {
      body: body({ beneficiaryVASPdid: keyless }) as never,
      source: 'api',
      hybrid: false,
    });
    // The network lets only a VASP's own users read its escrow key; the originator's escrow key is the fallback.
    const escrow = await orch.transfers.network.pii
      .get('get-escrow-didkey', { searchParams: { vaspDID: group.subA } })
      .json<{ did: string }>();
    expect(plan).toMatchObject({ mode: 'escrow', recipients: [escrow.did] });
  });

  it('is idempotent: a repeated Idempotency-Key returns the same transfer and creates one transaction; another body is refused', async () => {
    const key = randomUUID();
    const payload = body();
    expect((await post(payload, key)).status).toBe(202);
    const again = await post(payload, key);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: key, workflowId: `outgoing-${key}` });
    await until(key, (s) => !!s.transactionId);
    expect((await post(payload, key)).status).toBe(200);
    expect(await transactionsWithRef(key)).toBe(1);
    // One audit row for the request, naming the operator's credential, however often it was repeated; no customer data.
    const { rows: audit } = await orch.pool.query<{
      actor: string;
      details: { principal: { kind: string; roles: string[] }; asset: string };
    }>(`select actor, details from audit_log where action = 'outgoing.requested' and subject = $1`, [key]);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({
      principal: { kind: 'api-key', roles: ['operator'] },
      asset: payload.transactionAsset,
    });
    expect(JSON.stringify(audit[0])).not.toMatch(
      /naturalPerson|primaryIdentifier|originatorPersons|beneficiaryPersons/,
    );

    const other = await post({ ...payload, transactionAmount: '5' }, key);
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: { field: string } }).error.field).toBe('Idempotency-Key');
  });

  it('stores the request and its audit row in one transaction: when the row cannot be written, neither front door stores or starts anything (503), and a retry records it once', async () => {
    const key = randomUUID();
    const ref = `agent-${randomUUID()}`;
    const payload = body();
    const agentPayload = JSON.stringify(body({ transactionRef: ref }));
    const agentCreate = () =>
      fetch(`${orch.agentUrl}/tx/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: agentPayload,
      });
    const requested = async (id: string) =>
      (
        await orch.pool.query<{ actor: string }>(
          `select actor from audit_log where action = 'outgoing.requested' and subject = $1`,
          [id],
        )
      ).rows;
    const stored = async (id: string) =>
      (await orch.pool.query('select 1 from outgoing_transfers where id = $1', [id])).rowCount;
    const workflowExists = (id: string) =>
      orch.client.workflow
        .getHandle(`outgoing-${id}`)
        .describe()
        .then(
          () => true,
          (e: Error) => {
            if (e.name === 'WorkflowNotFoundError') return false;
            throw e;
          },
        );
    // The database refuses these two transfers' audit rows only (the log is shared with the suites running alongside).
    const fn = `refuse_outgoing_requested_${randomBytes(4).toString('hex')}`;
    await orch.pool.query(
      `create function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'no audit writes'; end $$`,
    );
    await orch.pool.query(
      `create trigger ${fn} before insert on audit_log for each row
       when (new.action = 'outgoing.requested' and new.subject in ('${key}', '${ref}')) execute function ${fn}()`,
    );
    try {
      const api = await post(payload, key);
      expect(api.status).toBe(503);
      // A passing failure says when to repeat the request.
      expect(api.headers.get('retry-after')).toBe('1');
      expect(await api.json()).toEqual({
        error: {
          type: 'AuditUnavailableError',
          message: expect.stringMatching(/neither stored nor started/),
          action: 'outgoing.requested',
        },
      });
      const agent = await agentCreate();
      expect(agent.status).toBe(503);
      expect(await agent.json()).toEqual({
        err: { name: 'AuditUnavailableError', code: 503, message: expect.stringMatching(/neither stored nor started/) },
      });
      for (const id of [key, ref]) {
        expect([id, await stored(id), await workflowExists(id), await requested(id)]).toEqual([id, 0, false, []]);
        expect((await fetch(`${orch.apiUrl}/v1/transfers/${id}`, { headers: orch.headers('viewer') })).status).toBe(
          404,
        );
      }
    } finally {
      await orch.pool.query(`drop trigger ${fn} on audit_log`);
      await orch.pool.query(`drop function ${fn}()`);
    }
    // Once the log takes writes again, the same requests go through, each recorded once however often it is repeated.
    expect((await post(payload, key)).status).toBe(202);
    expect((await post(payload, key)).status).toBe(200);
    expect((await agentCreate()).status).toBe(200);
    expect((await agentCreate()).status).toBe(200);
    for (const id of [key, ref]) expect([id, await stored(id), await workflowExists(id)]).toEqual([id, 1, true]);
    expect(await requested(key)).toHaveLength(1);
    expect(await requested(ref)).toEqual([{ actor: 'system:agent-listener' }]);
  });

  it('answers 400 naming the field for bad input, and starts nothing', async () => {
    const cases: [Record<string, unknown> | undefined, string, string?][] = [
      [{ transactionBlockchainInfo: undefined }, 'transactionBlockchainInfo'],
      [{ transactionAmount: '1.5' }, 'transactionAmount'],
      [{ transactionAmount: 100 }, 'transactionAmount'],
      [
        { originator: { originatorPersons: [{ naturalPerson: { name: [] } }] } },
        'originator.originatorPersons[0].naturalPerson',
      ],
      [{ beneficiary: {} }, 'beneficiary.beneficiaryPersons'],
      [{ beneficiaryVASPdid: randomDid() }, 'beneficiaryVASPdid'],
      [{ originatorVASPdid: group.gateway }, 'originatorVASPdid'],
      [{ originatorVASPdid: group.subB }, 'originatorVASPdid'],
      [undefined, 'Idempotency-Key', 'no-key'],
    ];
    for (const [over, field, flag] of cases) {
      const key = randomUUID();
      const payload: Record<string, unknown> = body(over ?? {});
      for (const [k, v] of Object.entries(over ?? {})) if (v === undefined) delete payload[k];
      const r = await post(payload, flag === 'no-key' ? '' : key);
      const answer = (await r.json()) as { error: { field: string; type: string } };
      expect([r.status, answer.error?.field, answer]).toEqual([400, expect.stringContaining(field), expect.anything()]);
      expect((await fetch(`${orch.apiUrl}/v1/transfers/${key}`, { headers: orch.headers('viewer') })).status).toBe(404);
      expect(await transactionsWithRef(key)).toBe(0);
    }
    expect(
      (
        await orch.pool.query(`select count(*)::int as n from outgoing_transfers where originator_vasp_did = $1`, [
          group.gateway,
        ])
      ).rows[0].n,
    ).toBe(0);
  });

  it('refuses a gateway originator inside the workflow too: non-retryable, the error names the field', async () => {
    const key = randomUUID();
    const { handle } = await startOutgoingTransfer(
      { temporal: orch.client, taskQueue: orch.taskQueue, transfers: orch.transfers },
      key,
      { body: body({ originatorVASPdid: group.gateway }) as never, source: 'api', hybrid: false },
    );
    await expect(handle.result()).rejects.toThrow();
    const s = await state(key);
    expect(s).toMatchObject({
      status: 'FAILED',
      final: true,
      error: { type: 'ValidationError', field: 'originatorVASPdid' },
    });
    expect(s.error!.message).toMatch(/gateway/);
    const { events } = await handle.fetchHistory();
    // Refused at once (a retried step would back off from 200 ms for 30 attempts), then written to the console's list and
    // reported: two local activities, the refused send step and the one that writes the list entry and reports (the
    // patches' markers aside: the workflow asks for them at its start).
    expect(events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length).toBe(2);
    const [first, last] = [events![0]!.eventTime!, events!.at(-1)!.eventTime!];
    expect(Number(last.seconds) - Number(first.seconds)).toBeLessThan(5);
    expect(await transactionsWithRef(key)).toBe(0);
  });

  it('a counterparty that never answers: the transfer ends EXPIRED at the deadline and is reported', async () => {
    const key = randomUUID();
    const shortCtx = { ...orch.transfers, config: { ...orch.transfers.config, answerDeadlineMs: 1500 } };
    await startOutgoingTransfer({ temporal: orch.client, taskQueue: orch.taskQueue, transfers: shortCtx }, key, {
      body: body() as never,
      source: 'api',
      hybrid: false,
    });
    const done = await until(key, (s) => s.final);
    expect(done.status).toBe('EXPIRED');
    expect(done.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'EXPIRED']);
    expect(done.history.at(-1)!.source).toBe('deadline: cancelled at the network');
    // Withdrawn at the network, so the counterparty can no longer accept it.
    const tx = await external.api
      .get('tx/info', { searchParams: { id: done.transactionId! } })
      .json<NetworkTransaction>();
    expect(tx.status).toBe('CANCELLED');
    const late = await external.api.post('tx/accept', {
      searchParams: { id: done.transactionId! },
      throwHttpErrors: false,
    });
    expect(late.status).toBe(400);
    await eventually(async () => receiver.received().find((c) => c.id === key && c.status === 'EXPIRED'));
  });

  it('a counterparty whose final answer beats the cancellation at the deadline: its answer is the outcome', async () => {
    const key = randomUUID();
    // Webhooks and polls are out of play (no webhook registered for this check; polling every 10 minutes), so only
    // the deadline's cancellation can learn that the counterparty declined.
    const shortCtx = {
      ...orch.transfers,
      config: { ...orch.transfers.config, answerDeadlineMs: 2500, pollIntervalMs: 600_000 },
    };
    await startOutgoingTransfer({ temporal: orch.client, taskQueue: orch.taskQueue, transfers: shortCtx }, key, {
      body: body() as never,
      source: 'api',
      hybrid: false,
    });
    const sent = await until(key, (s) => !!s.transactionId && s.status === 'SENT');
    const declined = await external.api
      .post('tx/decline', { json: { id: sent.transactionId, reason: 'test: declined before the deadline' } })
      .json<NetworkTransaction>();
    expect(declined.status).toBe('DECLINED');
    const done = await until(key, (s) => s.final);
    expect(done.status).toBe('DECLINED');
    expect(done.history.map((h) => h.status)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'DECLINED']);
    // Learnt from the refused cancellation, not from a webhook or a poll.
    expect(done.history.at(-1)!.source).toBe('network');
    const tx = await external.api
      .get('tx/info', { searchParams: { id: done.transactionId! } })
      .json<NetworkTransaction>();
    expect(tx.status).toBe('DECLINED');
  });

  it("with the sandbox's simulated counterparty and its real webhooks: it decrypts with its own key, accepts, and the webhook ends the transfer", async () => {
    // The counterparty: simulated by the sandbox, accepting, with its own published did:key.
    await sandbox.simulateCounterparty(encodeURIComponent(simulated), { default: 'accept' });
    // Our webhook endpoint at the network, with the secret it issues; no polling to help (pollInterval 10 min).
    const endpoint = 'sandbox-suba';
    const registered = await orch.transfers.network.api
      .post('webhook', { json: { vaspDID: group.subA, url: `${orch.apiUrl}/webhooks/notification/${endpoint}` } })
      .json<{ secret: string }>();
    orch.webhooks.notification[endpoint] = registered.secret;
    try {
      const key = randomUUID();
      const slowCtx = { ...orch.transfers, config: { ...orch.transfers.config, pollIntervalMs: 600_000 } };
      await startOutgoingTransfer({ temporal: orch.client, taskQueue: orch.taskQueue, transfers: slowCtx }, key, {
        body: body({ beneficiaryVASPdid: simulated }) as never,
        source: 'api',
        hybrid: false,
      });
      const done = await until(key, (s) => s.final, 30_000);
      expect(done).toMatchObject({ status: 'ACCEPTED', mode: 'end-to-end' });
      expect(done.history.filter((h) => h.source === 'webhook').map((h) => h.status)).toEqual(
        expect.arrayContaining(['ACCEPTED']),
      );
      const received = (await (
        await fetch(
          `${sandbox.url}/sandbox/counterparties/${encodeURIComponent(simulated)}/received/${done.transactionId}`,
          { headers: sandbox.testHeaders() },
        )
      ).json()) as Record<string, unknown>;
      expect(received).toMatchObject({ mode: 'end-to-end', decrypted: true });
      expect(received.fields).toBeGreaterThan(30);
    } finally {
      await orch.transfers.network.api.delete('webhook', { json: { vaspDID: group.subA } }).json();
    }
  });

  describe('notification webhook', () => {
    const deliver = (payload: unknown, id = `msg_${randomUUID()}`, secret = WEBHOOK_SECRET, endpoint = group.subA) => {
      const raw = JSON.stringify(payload);
      return fetch(`${orch.apiUrl}/webhooks/notification/${encodeURIComponent(endpoint)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...webhookHeaders(secret, id, raw) },
        body: raw,
      });
    };
    const envelope = (tx: Record<string, unknown>) => ({
      message: 'notification.transactionUpdated',
      payload: { transaction: tx },
      version: '1',
    });

    it('signals the workflow, ignores a duplicate delivery, records a late one, refuses a bad signature', async () => {
      const slowCtx = { ...orch.transfers, config: { ...orch.transfers.config, pollIntervalMs: 600_000 } };
      const key = randomUUID();
      await startOutgoingTransfer({ temporal: orch.client, taskQueue: orch.taskQueue, transfers: slowCtx }, key, {
        body: body() as never,
        source: 'api',
        hybrid: false,
      });
      const sent = await until(key, (s) => !!s.transactionId);
      const tx = {
        id: sent.transactionId,
        transactionRef: key,
        status: 'ACK',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: group.external,
      };

      const forged = await deliver(envelope(tx), undefined, `whsec_${randomBytes(32).toString('base64')}`);
      expect(forged.status).toBe(401);

      const id = `msg_${randomUUID()}`;
      const first = await deliver(envelope(tx), id);
      expect(await first.json()).toEqual({ received: true, duplicate: false, outcome: 'signalled' });
      const dup = await deliver(envelope(tx), id);
      expect(await dup.json()).toEqual({ received: true, duplicate: true });
      await until(key, (s) => s.status === 'ACK');

      const accepted = await deliver(envelope({ ...tx, status: 'ACCEPTED' }));
      expect(await accepted.json()).toMatchObject({ outcome: 'signalled' });
      const done = await until(key, (s) => s.final);
      expect(done.status).toBe('ACCEPTED');
      expect(done.history.filter((h) => h.source === 'webhook').map((h) => h.status)).toEqual(['ACK', 'ACCEPTED']);

      // After the end: acknowledged and recorded as late; the transfer does not move.
      await handleResult(key);
      const late = await deliver(envelope({ ...tx, status: 'DECLINED' }));
      expect(late.status).toBe(200);
      expect(await late.json()).toMatchObject({ outcome: 'late' });
      expect((await state(key)).status).toBe('ACCEPTED');

      // A transaction this system neither originated nor receives: recorded, acknowledged.
      const foreign = await deliver(
        envelope({ id: randomUUID(), status: 'SENT', originatorVASPdid: group.external, beneficiaryVASPdid: keyless }),
      );
      expect(await foreign.json()).toMatchObject({ outcome: 'not-ours' });
      const recorded = await orch.pool.query(
        'select outcome from received_webhooks where transaction_id = $1 order by received_at',
        [sent.transactionId],
      );
      expect(recorded.rows.map((r) => r.outcome)).toEqual(['signalled', 'signalled', 'late']);
    });

    const handleResult = (key: string) => orch.client.workflow.getHandle(`outgoing-${key}`).result();
  });

  // The agent's contract, no Authorization header, on the loopback agent listener; the main API's copies take tokens.
  describe('agent-compatible endpoints', () => {
    it('POST /tx/create goes through the workflow and answers the Transaction once created; a repeated transactionRef returns it', async () => {
      const ref = `agent-${randomUUID()}`;
      const payload = JSON.stringify(body({ transactionRef: ref }));
      const send = () =>
        fetch(`${orch.agentUrl}/tx/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: payload,
        });
      const r = await send();
      expect(r.status).toBe(200);
      const tx = (await r.json()) as NetworkTransaction;
      expect(tx).toMatchObject({ transactionRef: ref, originatorVASPdid: group.subA, status: 'SENT' });
      expect(tx.pii).toBeDefined();
      expect(tx.ivms101).toBeUndefined();
      expect((await state(ref)).transactionId).toBe(tx.id);
      const again = (await (await send()).json()) as NetworkTransaction;
      expect(again).toMatchObject({ id: tx.id });
      expect(await transactionsWithRef(ref)).toBe(1);
      // The counterparty reads what the agent encrypted.
      expect((await readAsCounterparty(tx.id, externalKey)).record.beneficiary).toEqual(fixture.beneficiary);
    });

    it("forwards without encrypting when the originator's keys are not held here (hosted), and answers errors in the network's shape", async () => {
      const noKeys = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
        group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      });
      try {
        const r = await fetch(`${noKeys.agentUrl}/tx/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body({ originatorVASPdid: group.subB })),
        });
        expect(r.status).toBe(200);
        const tx = (await r.json()) as NetworkTransaction;
        const mode = await sandbox.pool.query('select pii_mode from transactions where id = $1', [tx.id]);
        expect(mode.rows[0].pii_mode).toBe('hosted');

        const bad = await fetch(`${noKeys.agentUrl}/tx/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body({ originatorVASPdid: group.gateway })),
        });
        expect(bad.status).toBe(400);
        expect(await bad.json()).toMatchObject({
          err: { name: 'NotabeneTransactionValidationError', code: 400, field: 'originatorVASPdid' },
        });
      } finally {
        await noKeys.close();
      }
    });

    it('POST /tx/update encrypts plain IVMS101 like create; GET /tx/info without vaspDID decrypts with the party held here', async () => {
      const created = (await (
        await fetch(`${orch.agentUrl}/tx/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body()),
        })
      ).json()) as NetworkTransaction;
      const changed = structuredClone(fixture.beneficiary) as {
        beneficiaryPersons: { naturalPerson: { name: { nameIdentifier: { primaryIdentifier: string }[] }[] } }[];
      };
      changed.beneficiaryPersons[0]!.naturalPerson.name[0]!.nameIdentifier[0]!.primaryIdentifier = 'Gardner';
      const r = await fetch(`${orch.agentUrl}/tx/update`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: created.id, beneficiary: changed, txHash: '0xabc' }),
      });
      expect(r.status).toBe(200);
      const info = (await (await fetch(`${orch.agentUrl}/tx/info?id=${created.id}`)).json()) as NetworkTransaction;
      expect(info.ivms101).toEqual({ originator: fixture.originator, beneficiary: changed });
      expect((await readAsCounterparty(created.id, externalKey)).record.beneficiary).toEqual(changed);
    });
  });
});
