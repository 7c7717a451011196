/**
 * Issue 22 item 3 (incoming) and issue 23 item 3: a deposit from a self-hosted wallet above the receiving subsidiary's
 * proof threshold (EU: above 1,000 EUR) waits for the customer's ownership proof of the sending wallet, through the API
 * with the real Temporal server, PostgreSQL and the sandbox over HTTP. Proofs are made with real EIP-191 signatures.
 * Prices: the embedded table (ETH 3,000 USD, 0.92 EUR per USD).
 */
import { randomBytes } from 'node:crypto';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { storedSpelling } from '../../wallet-proofs/proofs';
import { bearerCall, roleCall } from '../harness/http';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { ethereumWallet } from '../harness/wallets';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Wei worth `eur` EUR at the embedded table's 3,000 USD per ETH and 0.92 EUR per USD. */
const weiForEur = (eur: number) => ((BigInt(Math.round(eur * 1e6)) * 10n ** 18n) / BigInt(2760 * 1e6)).toString();

describe('deposits from a self-hosted wallet wait for its ownership proof (issues 22 and 23, item 3)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (method: string, path: string, body?: unknown, on: RunningOrchestrator = orch) =>
    roleCall(on, 'operator', method, path, body);
  const customer = () => `cust-${randomBytes(6).toString('hex')}`;
  const ethHash = () => `0x${randomBytes(32).toString('hex')}`;
  /** A fresh address of subsidiary A (in Germany) in the group's registry. */
  const ownAddress = async () => {
    const address = `0x${randomBytes(20).toString('hex')}`;
    const r = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: `cust-${address.slice(-6)}` }],
    });
    expect(r).toMatchObject({ status: 200, body: { inserted: 1 } });
    return address;
  };
  /** POST /v1/deposits of `eur` EUR of ETH to subsidiary A from a wallet the custody system says is self-hosted. */
  const report = async (from: string, customerRef: string | undefined, eur: number, on = orch) =>
    api(
      'POST',
      '/v1/deposits',
      {
        vaspDid: g.subA,
        asset: 'ETH',
        txHash: ethHash(),
        to: await ownAddress(),
        from,
        fromSelfHosted: true,
        amount: weiForEur(eur),
        ...(customerRef !== undefined ? { customerRef } : {}),
      },
      on,
    );
  const until = (id: string, check: (d: Json) => boolean, on = orch, timeoutMs = 45_000) =>
    eventually(
      async () => {
        const d = (await api('GET', `/v1/deposits/${id}`, undefined, on)).body as Json;
        return check(d) ? d : undefined;
      },
      timeoutMs,
      200,
    );
  const audit = async (id: string) =>
    (
      await orch.pool.query<{ action: string; details: Json }>(
        'select action, details from audit_log where subject = $1 order by seq',
        [id],
      )
    ).rows;
  const waiters = async (address: string) =>
    (
      await orch.pool.query('select workflow_id from wallet_proof_waiters where asset = $1 and address = $2', [
        'ETH',
        storedSpelling(address),
      ])
    ).rows.map((r) => r.workflow_id as string);

  /** A SIGNATURE proof of the wallet for the customer, signed with the wallet's key: VERIFIED. */
  async function prove(wallet: ReturnType<typeof ethereumWallet>, customerRef: string) {
    const created = await api('POST', '/v1/wallet-proofs', {
      customerRef,
      asset: 'ETH',
      address: wallet.address,
      method: 'SIGNATURE',
      vaspDid: g.subA,
    });
    expect(created.status).toBe(201);
    const signed = await api('POST', `/v1/wallet-proofs/${created.body.id}/signature`, {
      signature: wallet.personalSign(created.body.instructions.challenge.message),
    });
    expect(signed.body).toMatchObject({ status: 'VERIFIED' });
    return signed.body as Json;
  }

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      // Subsidiary A is in the EU: a self-hosted wallet's proof above 1,000 EUR.
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE' } },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 3_600_000, recheckInitialMs: 500, recheckMaxMs: 2_000 },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('1,500 EUR from an unproven self-hosted wallet waits in AWAITING_PROOF, then the customer’s VERIFIED proof releases it', async () => {
    const wallet = ethereumWallet();
    const customerRef = customer();
    const created = await report(wallet.address, customerRef, 1500);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'HELD', proofRequired: true, customerRef });
    const id = created.body.id as string;
    const waiting = await until(id, (d) => d.status === 'AWAITING_PROOF');
    // Not reported to the network: no originator VASP sends Travel Rule data for a self-hosted wallet.
    expect(waiting).toMatchObject({ transactionId: null, networkStatus: null });
    await eventually(async () =>
      (await waiters(wallet.address)).includes(workflowIds.deposit(id)) ? true : undefined,
    );
    // Another customer's proof of the wallet does not release it.
    await prove(wallet, customer());
    await new Promise((r) => setTimeout(r, 1500));
    expect((await api('GET', `/v1/deposits/${id}`)).body.status).toBe('AWAITING_PROOF');
    const proof = await prove(wallet, customerRef);
    const done = await until(id, (d) => d.status === 'RELEASED');
    expect(done).toMatchObject({ decidedAt: expect.any(String), transactionId: null });
    expect(done.reason).toContain(proof.id);
    const entries = await audit(id);
    expect(entries.map((e) => e.action)).toEqual(['deposit.reported', 'deposit.awaiting-proof', 'deposit.released']);
    expect(entries[2]!.details).toMatchObject({ from: 'AWAITING_PROOF', to: 'RELEASED', proofId: proof.id });
    expect(await waiters(wallet.address)).not.toContain(workflowIds.deposit(id));
  });

  it('900 EUR from a self-hosted wallet is below the EU proof threshold: not held for a proof, matched at the network', async () => {
    const wallet = ethereumWallet();
    const created = await report(wallet.address, undefined, 900);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ proofRequired: false });
    // The existing path: reported with tx/notify, which answers an INCOMPLETE message for the originator's data.
    const d = await until(created.body.id as string, (x) => x.networkStatus !== null);
    expect(d.status).not.toBe('AWAITING_PROOF');
    expect(d.transactionId).toEqual(expect.any(String));
  });

  it('a wallet the customer already proved releases a 1,500 EUR deposit at once, without fromSelfHosted', async () => {
    const wallet = ethereumWallet();
    const customerRef = customer();
    const proof = await prove(wallet, customerRef);
    const created = await api('POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: ethHash(),
      to: await ownAddress(),
      from: wallet.address.toLowerCase(),
      amount: weiForEur(1500),
      customerRef,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ proofRequired: true });
    const done = await until(created.body.id as string, (d) => d.status === 'RELEASED');
    expect(done).toMatchObject({ transactionId: null });
    expect(done.reason).toContain(proof.id);
    const actions = (await audit(created.body.id as string)).map((e) => e.action);
    expect(actions).toEqual(['deposit.reported', 'deposit.released']);
  });

  it('above the threshold without customerRef: 400 naming customerRef, nothing stored', async () => {
    const wallet = ethereumWallet();
    const before = await orch.pool.query('select count(*)::int as n from deposits');
    const r = await report(wallet.address, undefined, 1500);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('customerRef');
    const after = await orch.pool.query('select count(*)::int as n from deposits');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('no proof by the data deadline: RETURN_REQUIRED with the reason', async () => {
    // An orchestrator of its own whose deposits wait 4 s (DEPOSIT_DATA_DEADLINE), on the same network.
    const short = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE' } },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: 4_000, recheckInitialMs: 500, recheckMaxMs: 60_000 },
    });
    try {
      const wallet = ethereumWallet();
      const created = await report(wallet.address, customer(), 1500, short);
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      await until(id, (d) => d.status === 'AWAITING_PROOF', short);
      const done = await until(id, (d) => d.status === 'RETURN_REQUIRED', short, 30_000);
      expect(done.reason).toContain('no VERIFIED ownership proof');
      expect(done.transactionId).toBeNull();
      expect(await waiters(wallet.address)).toEqual([]);
    } finally {
      await short.close();
    }
  });
});
