/**
 * Issue 23, item 5: when the custody system may broadcast an outgoing transfer, by the sending subsidiary's rule
 * (TRANSFER_BROADCAST, TRANSFER_BROADCAST_BY_SUBSIDIARY), told once per transfer as `transfer.release` or
 * `transfer.halt`. A real HTTP receiver (test/harness/custody-receiver.ts) plays the custody system: it verifies each callback's signature,
 * answers 500 to the first delivery of each message (the retry must come) and 200 after. Through the API with the real
 * Temporal server, PostgreSQL and the sandbox over HTTP, whose simulated beneficiary VASP accepts, rejects or answers
 * late by destination address.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { startCustodyReceiver, type CustodyReceiver } from '../harness/custody-receiver';
import { roleCall } from '../harness/http';
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

const ivms = JSON.parse(readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8')) as Json;

describe('outgoing transfers: transfer.release / transfer.halt to the custody system by the subsidiary rule (issue 23)', () => {
  const g = groupSeed();
  const keyA = createDidKeyRecord();
  const keyB = createDidKeyRecord();
  const evm = () => `0x${randomBytes(20).toString('hex')}`;
  const accepting = evm();
  const rejecting = evm();
  const late = evm();
  let receiver: CustodyReceiver;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    receiver = await startCustodyReceiver();
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.subA, privateKeyHex: keyA.keys[0].privateKeyHex },
        { vaspDID: g.subB, privateKeyHex: keyB.keys[0].privateKeyHex },
      ]),
      transfers: {
        pollIntervalMs: 300,
        answerDeadlineMs: 120_000,
        // Subsidiary A broadcasts at once; B, by the group's rule, once the beneficiary accepted.
        broadcast: { rule: { when: 'on-accepted' }, bySubsidiary: { [g.subA]: { when: 'at-once' } } },
      },
      custody: receiver.custody,
    });
    await sb.simulateCounterparty(g.external, {
      behaviours: { [accepting]: 'accept', [rejecting]: 'reject', [late]: 'late:4' },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await receiver?.close();
  });

  async function send(from: string, destination: string): Promise<string> {
    const id = randomUUID();
    const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '1000000000000000000',
        originatorVASPdid: from,
        beneficiaryVASPdid: g.external,
        transactionBlockchainInfo: { destination },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
      }),
    });
    expect(r.status).toBe(202);
    return id;
  }
  const transfer = async (id: string) => (await roleCall(orch, 'viewer', 'GET', `/v1/transfers/${id}`)).body;
  const final = (id: string) =>
    eventually(async () => {
      const t = await transfer(id);
      return t.final ? t : undefined;
    }, 60_000);
  /** The deliveries of a transfer, once one was acknowledged. */
  const acknowledged = (id: string) =>
    eventually(async () => {
      const of = receiver.deliveries.filter((d) => d.body.transferId === id);
      return of.some((d) => d.answered === 200) ? of : undefined;
    }, 60_000);
  const audited = async (id: string) =>
    (
      await orch.pool.query<{ actor: string; details: Json }>(
        "select actor, details from audit_log where action = 'outgoing.callback-delivered' and subject = $1",
        [id],
      )
    ).rows;

  it('on-accepted (the group rule): ACCEPTED → one transfer.release, signed, refused once, delivered again, audited once', async () => {
    const id = await send(g.subB, accepting);
    const done = await final(id);
    expect(done.status).toBe('ACCEPTED');
    const sent = await acknowledged(id);
    expect(sent.map((d) => [d.verified, d.answered, d.webhookId])).toEqual([
      [true, 500, `msg_${id}_release`],
      [true, 200, `msg_${id}_release`],
    ]);
    expect(sent[1]!.body).toEqual({
      event: 'transfer.release',
      transferId: id,
      vaspDid: g.subB,
      beneficiaryVaspDid: g.external,
      asset: 'ETH',
      amount: '1000000000000000000',
      transactionId: done.transactionId,
      status: 'ACCEPTED',
      rule: 'on-accepted',
      reason: 'the beneficiary VASP accepted the transfer',
      decidedAt: expect.any(String),
    });
    // Exactly these fields: ids, DIDs, asset and amount; no personal data of the customers.
    const shown = await eventually(async () => {
      const t = await transfer(id);
      return t.broadcast ? t : undefined;
    });
    expect(shown.broadcast).toEqual({
      event: 'transfer.release',
      rule: 'on-accepted',
      reason: 'the beneficiary VASP accepted the transfer',
      at: sent[1]!.body.decidedAt,
    });
    const rows = await eventually(async () => ((await audited(id)).length ? audited(id) : undefined));
    expect(rows).toEqual([
      {
        actor: 'system:outgoing',
        details: { event: 'transfer.release', webhookId: `msg_${id}_release`, status: 200 },
      },
    ]);
  });

  it('on-accepted: a rejection → transfer.halt, and no release ever', async () => {
    const id = await send(g.subB, rejecting);
    expect((await final(id)).status).toBe('REJECTED');
    const sent = await acknowledged(id);
    expect(sent.every((d) => d.body.event === 'transfer.halt' && d.webhookId === `msg_${id}_halt`)).toBe(true);
    expect(sent.at(-1)!.body).toMatchObject({ status: 'REJECTED', reason: 'the transfer ended REJECTED' });
  });

  it("at-once (subsidiary A's rule): released before the beneficiary answers; its later ACCEPTED announces nothing more", async () => {
    const id = await send(g.subA, late);
    const sent = await acknowledged(id);
    expect(sent.map((d) => d.body.event)).toEqual(['transfer.release', 'transfer.release']);
    expect(sent[1]!.body).toMatchObject({ rule: 'at-once', reason: 'the Travel Rule data is at the network' });
    expect(['SENT', 'ACK']).toContain(sent[1]!.body.status);
    expect((await final(id)).status).toBe('ACCEPTED');
    // The run ended after the acceptance: still the one release.
    expect(receiver.deliveries.filter((d) => d.body.transferId === id)).toHaveLength(2);
  });
});
