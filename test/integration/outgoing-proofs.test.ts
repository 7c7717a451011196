/**
 * Outgoing transfers to a self-hosted wallet and its ownership proof (issue 22, item 3), through the API with the real
 * Temporal server, PostgreSQL and the sandbox over HTTP: above the EU subsidiary's proof threshold (1,000 EUR) a
 * transfer with no proof waits in AWAITING_PROOF and is created at the network with `beneficiaryProof` once a wallet
 * proof made with a real EIP-191 signature is VERIFIED; below it, it goes at once; with a proof already VERIFIED, it
 * goes at once with that proof. Prices: the embedded table (ETH 3,000 USD, 0.92 EUR per USD).
 */
import { ethereumWallet } from '../harness/wallets';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDidKeyRecord } from '../../lib/crypto';
import { TransferStatus } from '../../lib/temporal/search-attributes';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { Role } from '../../lib/principal';
import { txInfo } from '../../network/transactions';
import { storedSpelling } from '../../wallet-proofs/proofs';
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

describe('outgoing transfers to a self-hosted wallet wait for its ownership proof (issue 22, item 3)', () => {
  const g = groupSeed();
  const keyA = createDidKeyRecord();
  const keyB = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const customer = () => `cust-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.subA, privateKeyHex: keyA.keys[0].privateKeyHex },
        { vaspDID: g.subB, privateKeyHex: keyB.keys[0].privateKeyHex },
      ]),
      // Subsidiary A is in the EU: a proof above 1,000 EUR; B in Switzerland: at any amount.
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE', [g.subB]: 'CH' } },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  /** POST /v1/transfers of `eur` EUR of ETH from subsidiary A to the wallet, which the request says is self-hosted. */
  async function send(address: string, customerRef: string, eur: number, over: Json = {}) {
    const id = `t-${randomBytes(6).toString('hex')}`;
    const r = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: weiForEur(eur),
        originatorVASPdid: g.subA,
        originatorRef: customerRef,
        isNonCustodial: true,
        transactionBlockchainInfo: { destination: address },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
        ...over,
      }),
    });
    return { id, status: r.status, body: (await r.json()) as Json };
  }

  const transfer = async (id: string) => (await api('viewer', 'GET', `/v1/transfers/${id}`)).body;
  const sentTransfer = (id: string) =>
    eventually(async () => {
      const t = await transfer(id);
      return t.transactionId ? t : undefined;
    });
  const atNetwork = (transactionId: string) => txInfo<Json>(orch.transfers.network, transactionId);
  const networkRows = async (id: string) =>
    (await sb.pool.query('select id from transactions where transaction_ref = $1', [id])).rowCount;

  /** A SIGNATURE proof of the wallet for the customer, signed with the wallet's key: VERIFIED. */
  async function prove(wallet: ReturnType<typeof ethereumWallet>, customerRef: string) {
    const created = await api('operator', 'POST', '/v1/wallet-proofs', {
      customerRef,
      asset: 'ETH',
      address: wallet.address,
      method: 'SIGNATURE',
      vaspDid: g.subA,
    });
    expect(created.status).toBe(201);
    const signed = await api('operator', 'POST', `/v1/wallet-proofs/${created.body.id}/signature`, {
      signature: wallet.personalSign(created.body.instructions.challenge.message),
    });
    expect(signed.body).toMatchObject({ status: 'VERIFIED' });
    return signed.body;
  }

  it('a 1,500 EUR transfer to an unverified wallet waits in AWAITING_PROOF, then goes with the proof once VERIFIED', async () => {
    const wallet = ethereumWallet();
    const customerRef = customer();
    const started = await send(wallet.address, customerRef, 1500);
    expect(started.status).toBe(202);
    expect(started.body.classification).toMatchObject({
      type: 'NON_CUSTODIAL',
      beneficiaryAddressType: 'UNHOSTED',
      ownershipProofRequired: true,
      // The wallet the console's transfer page looks its proofs up by, as the proofs store spells it (EIP-55).
      beneficiaryWallet: { asset: 'ETH', address: storedSpelling(wallet.address) },
    });
    await eventually(async () => ((await transfer(started.id)).status === 'AWAITING_PROOF' ? true : undefined));

    // Visible where operators look: the list, the search attribute; and nothing at the network.
    const listed = await eventually(async () => {
      const page = await api('viewer', 'GET', '/v1/transfers?status=AWAITING_PROOF&limit=100');
      return page.body.data?.find((t: Json) => t.id === started.id);
    });
    expect(listed).toMatchObject({ direction: 'outgoing', status: 'AWAITING_PROOF', final: false });
    const described = await orch.client.workflow.getHandle(workflowIds.outgoingTransfer(started.id)).describe();
    expect(described.typedSearchAttributes.get(TransferStatus)).toBe('AWAITING_PROOF');
    const waiting = await transfer(started.id);
    expect(waiting.transactionId).toBeUndefined();
    expect(await networkRows(started.id)).toBe(0);
    // Registered under the wallet's stored spelling (EIP-55), as proofs are.
    const waiters = await orch.pool.query(
      'select workflow_id from wallet_proof_waiters where lower(address) = $1 and asset = $2',
      [wallet.address, 'ETH'],
    );
    expect(waiters.rows).toEqual([{ workflow_id: workflowIds.outgoingTransfer(started.id) }]);

    // Another customer's proof of the same wallet wakes the transfer, which keeps waiting: it is not its customer's.
    await prove(wallet, customer());
    await new Promise((r) => setTimeout(r, 1500));
    expect((await transfer(started.id)).status).toBe('AWAITING_PROOF');
    expect(await networkRows(started.id)).toBe(0);

    const proof = await prove(wallet, customerRef);
    const sent = await sentTransfer(started.id);
    expect(sent.history.map((h: Json) => h.status).slice(0, 3)).toEqual(['RECEIVED', 'AWAITING_PROOF', 'PREPARED']);
    const tx = await atNetwork(sent.transactionId);
    expect(tx.transactionRef).toBe(started.id);
    expect(tx.beneficiaryProof).toMatchObject({
      type: 'eip-191',
      proof: proof.evidence.signature,
      address: proof.address,
    });
    expect(tx.beneficiaryProof.attestation).toContain(`Customer reference: ${customerRef}`);
    // Signalled and removed.
    const left = await orch.pool.query('select 1 from wallet_proof_waiters where address = $1', [proof.address]);
    expect(left.rowCount).toBe(0);
  });

  it('a 900 EUR transfer to an unverified wallet goes at once, without a proof', async () => {
    const wallet = ethereumWallet();
    const started = await send(wallet.address, customer(), 900);
    expect(started.status).toBe(202);
    expect(started.body.classification).toMatchObject({ type: 'NON_CUSTODIAL', ownershipProofRequired: false });
    const sent = await sentTransfer(started.id);
    expect(sent.history.map((h: Json) => h.status)).not.toContain('AWAITING_PROOF');
    const tx = await atNetwork(sent.transactionId);
    expect(tx.beneficiaryProof ?? null).toBeNull();
  });

  it("with the customer's proof already VERIFIED, a 1,500 EUR transfer goes at once with it; the wallet is UNHOSTED by its proof alone", async () => {
    const wallet = ethereumWallet();
    const customerRef = customer();
    const proof = await prove(wallet, customerRef);

    // The address registry knows the proven wallet: self-hosted without isNonCustodial, and no proof missing.
    const validated = await api('operator', 'POST', '/v1/transfers/validate', {
      transactionAsset: 'ETH',
      transactionAmount: weiForEur(1500),
      originatorVASPdid: g.subA,
      originatorRef: customerRef,
      transactionBlockchainInfo: { destination: wallet.address.toLowerCase() },
    });
    expect(validated.body).toMatchObject({ type: 'NON_CUSTODIAL', beneficiaryAddressType: 'UNHOSTED' });
    expect(validated.body.errors.join(' ')).not.toContain('OWNERSHIP_PROOF_REQUIRED');

    const started = await send(wallet.address.toLowerCase(), customerRef, 1500, { isNonCustodial: undefined });
    expect(started.status).toBe(202);
    const sent = await sentTransfer(started.id);
    expect(sent.history.map((h: Json) => h.status)).not.toContain('AWAITING_PROOF');
    const tx = await atNetwork(sent.transactionId);
    expect(tx.beneficiaryProof).toMatchObject({ type: 'eip-191', proof: proof.evidence.signature });
  });

  it("a Swiss subsidiary's transfer of 10 EUR to an unverified wallet waits: Switzerland asks for a proof at any amount", async () => {
    const started = await send(ethereumWallet().address, customer(), 10, { originatorVASPdid: g.subB });
    expect(started.status).toBe(202);
    expect(started.body.classification).toMatchObject({ type: 'NON_CUSTODIAL', ownershipProofRequired: true });
    await eventually(async () => ((await transfer(started.id)).status === 'AWAITING_PROOF' ? true : undefined));
    expect(await networkRows(started.id)).toBe(0);
  });

  it('a transfer that needs a proof names its customer: without originatorRef it is refused, 400 naming the field', async () => {
    const started = await send(ethereumWallet().address, customer(), 1500, { originatorRef: undefined });
    expect(started.status).toBe(400);
    expect(JSON.stringify(started.body)).toContain('originatorRef');
    expect(await networkRows(started.id)).toBe(0);
  });
});
