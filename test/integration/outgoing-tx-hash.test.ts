/**
 * `PATCH /v1/transfers/:id {txHash}` (issue 23, item 5): the custody system says which blockchain transaction carried
 * an outgoing transfer once it broadcast it; the hash is checked for the asset's chain, sent on to the network with
 * tx/update (audited) and kept with the transfer. Through the API with the real Temporal server, PostgreSQL and the
 * sandbox over HTTP. The transfers go to self-hosted wallets, which the network records at once (no counterparty).
 */
import { ethereumWallet } from '../harness/wallets';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import type { Role } from '../../lib/principal';
import { txInfo } from '../../network/transactions';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { roleCall } from '../harness/http';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ivms = JSON.parse(readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8')) as Json;

/** Wei worth `eur` EUR at the embedded table's 3,000 USD per ETH and 0.92 EUR per USD. */
const weiForEur = (eur: number) => ((BigInt(Math.round(eur * 1e6)) * 10n ** 18n) / BigInt(2760 * 1e6)).toString();
const ethHash = () => `0x${randomBytes(32).toString('hex')}`;

describe('the txHash of a broadcast outgoing transfer (issue 23, item 5)', () => {
  const g = groupSeed();
  const keyA = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.subA, privateKeyHex: keyA.keys[0].privateKeyHex }]),
      // Subsidiary A is in the EU: a self-hosted wallet needs its ownership proof above 1,000 EUR.
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE', [g.subB]: 'DE' } },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  /** POST /v1/transfers of `eur` EUR of ETH from subsidiary A to a self-hosted wallet. */
  async function send(eur: number) {
    const id = `t-${randomBytes(6).toString('hex')}`;
    const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: weiForEur(eur),
        originatorVASPdid: g.subA,
        originatorRef: `cust-${randomBytes(4).toString('hex')}`,
        isNonCustodial: true,
        transactionBlockchainInfo: { destination: ethereumWallet().address },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
      }),
    });
    expect(r.status).toBe(202);
    return id;
  }
  const transfer = async (id: string) => (await api('viewer', 'GET', `/v1/transfers/${id}`)).body;
  const sentTransfer = (id: string) =>
    eventually(async () => {
      const t = await transfer(id);
      return t.transactionId ? t : undefined;
    });
  const atNetwork = (transactionId: string) => txInfo<Json>(orch.transfers.network, transactionId);
  const patch = (role: Role, id: string, body: unknown) => api(role, 'PATCH', `/v1/transfers/${id}`, body);

  it('is sent on to the network, kept with the transfer, audited, and set once', async () => {
    const id = await send(500);
    const sent = await sentTransfer(id);
    const hash = ethHash();

    const added = await patch('operator', id, { txHash: hash });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ id, transactionId: sent.transactionId, txHash: hash });
    expect((await atNetwork(sent.transactionId)).transactionBlockchainInfo.txHash).toBe(hash);
    expect((await transfer(id)).txHash).toBe(hash);
    const audited = await orch.pool.query<{ details: Json }>(
      "select details from audit_log where action = 'transaction.update.requested' and subject = $1",
      [sent.transactionId],
    );
    expect(audited.rows.map((r) => r.details.fields)).toEqual([['txHash']]);

    // The same hash again is answered alike (a caller whose answer was lost repeats it); another one is refused.
    expect((await patch('operator', id, { txHash: hash })).body).toMatchObject({ txHash: hash });
    const other = await patch('operator', id, { txHash: ethHash() });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ type: 'ConflictError', field: 'txHash' });
    expect((await atNetwork(sent.transactionId)).transactionBlockchainInfo.txHash).toBe(hash);
  });

  it('refuses a hash of the wrong shape for the chain (400 naming txHash), a viewer (403) and an unknown transfer (404)', async () => {
    const id = await send(500);
    const sent = await sentTransfer(id);
    for (const txHash of [randomBytes(32).toString('hex'), `0x${randomBytes(31).toString('hex')}`, '0xnothex']) {
      const r = await patch('operator', id, { txHash });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ field: 'txHash' });
    }
    const extra = await patch('operator', id, { txHash: ethHash(), note: 'x' });
    expect(extra.status).toBe(400);
    expect((await patch('viewer', id, { txHash: ethHash() })).status).toBe(403);
    expect((await patch('operator', 't-unknown-transfer', { txHash: ethHash() })).status).toBe(404);
    // Nothing reached the network or the transfer.
    expect((await atNetwork(sent.transactionId)).transactionBlockchainInfo.txHash || null).toBeNull();
    expect((await transfer(id)).txHash).toBeUndefined();
  });

  it('refuses a transfer the network does not know yet: it must not be broadcast (409)', async () => {
    // Above 1,000 EUR to a wallet with no ownership proof: AWAITING_PROOF, nothing at the network.
    const id = await send(1500);
    await eventually(async () => ((await transfer(id)).status === 'AWAITING_PROOF' ? true : undefined));
    const r = await patch('operator', id, { txHash: ethHash() });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ type: 'ConflictError', field: 'id', status: 'AWAITING_PROOF' });
    expect((await transfer(id)).txHash).toBeUndefined();
  });
});
