import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base64 } from '@scure/base';
import { p2wpkh, RawWitness } from '@scure/btc-signer';
import { bip322Transactions } from '../../wallet-proofs/signature/bitcoin';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import type { Role } from '../../lib/principal';
import { roleCall } from '../harness/http';
import { ethereumWallet } from '../harness/wallets';
import { workflowIds } from '../../lib/temporal/workflow-ids';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A native segwit (P2WPKH) Bitcoin wallet made in the test, signing BIP-322 "simple" with @scure/btc-signer's signer. */
function bitcoinWallet() {
  const secretKey = secp256k1.utils.randomSecretKey();
  const payment = p2wpkh(secp256k1.getPublicKey(secretKey, true));
  const signBip322 = (message: string) => {
    const { toSign } = bip322Transactions(payment.script, message);
    toSign.signIdx(secretKey, 0);
    toSign.finalizeIdx(0);
    return base64.encode(RawWitness.encode(toSign.getInput(0).finalScriptWitness!));
  };
  return { address: payment.address!, signBip322 };
}

describe('wallet proofs API: signatures, small deposits, reviews, reuse, bad input (issue 22)', () => {
  const g = groupSeed();
  const DEPOSIT_ADDRESS = `0x${randomBytes(20).toString('hex')}`;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const customer = () => `cust-${randomBytes(6).toString('hex')}`;
  const create = (over: Json = {}) =>
    api('operator', 'POST', '/v1/wallet-proofs', {
      customerRef: customer(),
      asset: 'ETH',
      address: ethereumWallet().address,
      method: 'SIGNATURE',
      vaspDid: g.subA,
      ...over,
    });
  const auditActions = async (id: string) =>
    (
      await orch.pool.query<{ action: string; actor: string }>(
        'select action, actor from audit_log where subject = $1 order by seq',
        [id],
      )
    ).rows;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      walletProofs: { depositAddresses: { ethereum: DEPOSIT_ADDRESS } },
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('a valid EIP-191 signature from the wallet verifies it (audited), and a second request reuses the proof', async () => {
    const wallet = ethereumWallet();
    const customerRef = customer();
    const created = await create({ customerRef, address: wallet.address });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'PENDING', method: 'SIGNATURE', scheme: 'EIP191' });
    const { message, expiresAt } = created.body.instructions.challenge;
    expect(message.toLowerCase()).toContain(`address: ${wallet.address}`);
    expect(message).toContain(`Customer reference: ${customerRef}`);
    expect(message).toContain(`Nonce: ${created.body.nonce}`);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());

    const signed = await api('operator', 'POST', `/v1/wallet-proofs/${created.body.id}/signature`, {
      signature: wallet.personalSign(message),
    });
    expect(signed.status).toBe(200);
    expect(signed.body).toMatchObject({ id: created.body.id, status: 'VERIFIED', reason: null });
    expect(signed.body.evidence.signature).toMatch(/^0x[0-9a-f]{130}$/);
    // Reused for WALLET_PROOF_VALID_DAYS (365 by default) from verification.
    const days = (Date.parse(signed.body.expiresAt) - Date.parse(signed.body.verifiedAt)) / 86_400_000;
    expect(days).toBeCloseTo(365, 3);
    expect((await auditActions(created.body.id)).map((a) => a.action)).toEqual([
      'wallet-proof.create',
      'wallet-proof.verified',
    ]);

    // The same address in another spelling (all upper case hex) is the same wallet.
    const again = await create({ customerRef, address: `0x${wallet.address.slice(2).toUpperCase()}` });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: created.body.id, status: 'VERIFIED', reused: true });
    // Another customer with the same address gets a proof of its own.
    expect((await create({ address: wallet.address })).status).toBe(201);

    const listed = await api('viewer', 'GET', `/v1/wallet-proofs?status=VERIFIED&customerRef=${customerRef}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((p: Json) => p.id)).toEqual([created.body.id]);
    const read = await api('viewer', 'GET', `/v1/wallet-proofs/${created.body.id}`);
    expect(read.body.status).toBe('VERIFIED');
  });

  it('a valid BIP-322 signature from a segwit wallet verifies it; the same signature for another address is REJECTED', async () => {
    const wallet = bitcoinWallet();
    const created = await create({ asset: 'BTC', address: wallet.address, scheme: 'BIP322' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'PENDING', method: 'SIGNATURE', scheme: 'BIP322' });
    const signature = wallet.signBip322(created.body.instructions.challenge.message);
    const signed = await api('operator', 'POST', `/v1/wallet-proofs/${created.body.id}/signature`, { signature });
    expect(signed.status).toBe(200);
    expect(signed.body).toMatchObject({ id: created.body.id, status: 'VERIFIED', reason: null });

    const other = await create({ asset: 'BTC', address: bitcoinWallet().address, scheme: 'BIP322' });
    const forged = await api('operator', 'POST', `/v1/wallet-proofs/${other.body.id}/signature`, {
      signature: wallet.signBip322(other.body.instructions.challenge.message),
    });
    expect(forged.status).toBe(200);
    expect(forged.body.status).toBe('REJECTED');
    expect(forged.body.reason).toEqual(expect.any(String));
  });

  it('a repeat under the same Idempotency-Key starts the workflow a pending proof lost', async () => {
    const wallet = ethereumWallet();
    const key = `wp-repeat-${randomBytes(6).toString('hex')}`;
    const body = {
      customerRef: customer(),
      asset: 'ETH',
      address: wallet.address,
      method: 'SIGNATURE',
      vaspDid: g.subA,
    };
    const post = () =>
      fetch(`${orch.apiUrl}/v1/wallet-proofs`, {
        method: 'POST',
        headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': key }),
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
    const first = await post();
    expect(first.status).toBe(201);
    expect(first.body.id).toBe(key);
    // The row stands, its workflow is gone (as when the process dies between the two): nothing takes the signature.
    await orch.client.workflow.getHandle(workflowIds.walletProof(key)).terminate('test: the start was lost');
    const message = first.body.instructions.challenge.message;
    const lost = await api('operator', 'POST', `/v1/wallet-proofs/${key}/signature`, {
      signature: wallet.personalSign(message),
    });
    expect(lost.status).toBe(409);

    const repeat = await post();
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ id: key, status: 'PENDING' });
    const signed = await api('operator', 'POST', `/v1/wallet-proofs/${key}/signature`, {
      signature: wallet.personalSign(message),
    });
    expect(signed.status).toBe(200);
    expect(signed.body.status).toBe('VERIFIED');
  });

  it('the list pages by cursor, and its address filter finds an Ethereum address in any case', async () => {
    const customerRef = customer();
    const wallets = [ethereumWallet(), ethereumWallet(), ethereumWallet()];
    for (const w of wallets) expect((await create({ customerRef, address: w.address })).status).toBe(201);
    const first = await api('viewer', 'GET', `/v1/wallet-proofs?customerRef=${customerRef}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api(
      'viewer',
      'GET',
      `/v1/wallet-proofs?customerRef=${customerRef}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    expect(second.body.data).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const seen = [...first.body.data, ...second.body.data].map((p: Json) => p.address.toLowerCase()).sort();
    expect(seen).toEqual(wallets.map((w) => w.address.toLowerCase()).sort());

    const upper = `0x${wallets[0]!.address.slice(2).toUpperCase()}`;
    const byAddress = await api('viewer', 'GET', `/v1/wallet-proofs?address=${upper}`);
    expect(byAddress.body.data.map((p: Json) => p.customerRef)).toEqual([customerRef]);
    expect((await api('viewer', 'GET', '/v1/wallet-proofs?status=DONE')).status).toBe(400);
  });

  it("the same wallet's signature over another address's challenge is REJECTED with the reason", async () => {
    const signer = ethereumWallet();
    const created = await create({ address: ethereumWallet().address });
    const signed = await api('operator', 'POST', `/v1/wallet-proofs/${created.body.id}/signature`, {
      signature: signer.personalSign(created.body.instructions.challenge.message),
    });
    expect(signed.status).toBe(200);
    expect(signed.body.status).toBe('REJECTED');
    expect(signed.body.reason).toMatch(/address/i);
    // A finished proof takes no second signature.
    const late = await api('operator', 'POST', `/v1/wallet-proofs/${created.body.id}/signature`, {
      signature: signer.personalSign(created.body.instructions.challenge.message),
    });
    expect(late.status).toBe(409);
    expect((await auditActions(created.body.id)).map((a) => a.action)).toEqual([
      'wallet-proof.create',
      'wallet-proof.rejected',
    ]);
  });

  it('a malformed signature answers 400 naming signature, and the proof stays PENDING', async () => {
    const created = await create();
    const id = created.body.id;
    const short = await api('operator', 'POST', `/v1/wallet-proofs/${id}/signature`, {
      signature: `0x${'ab'.repeat(64)}`,
    });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ field: 'signature' });
    expect(short.body.error.rule).toMatch(/65 bytes/);
    const notHex = await api('operator', 'POST', `/v1/wallet-proofs/${id}/signature`, {
      signature: `0x${'zz'.repeat(65)}`,
    });
    expect(notHex.status).toBe(400);
    expect(notHex.body.error.field).toBe('signature');
    expect((await api('viewer', 'GET', `/v1/wallet-proofs/${id}`)).body.status).toBe('PENDING');
  });

  it('a replayed challenge (a nonce already used) answers 400 naming nonce, and writes nothing', async () => {
    const nonce = randomBytes(32).toString('hex');
    expect((await create({ nonce })).status).toBe(201);
    const before = (await orch.pool.query('select count(*)::int as n from wallet_proofs')).rows[0].n;
    const replay = await create({ nonce: `0x${nonce.toUpperCase()}` });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toMatchObject({ field: 'nonce' });
    expect((await orch.pool.query('select count(*)::int as n from wallet_proofs')).rows[0].n).toBe(before);
  });

  it('bad input answers 400 naming the field', async () => {
    const cases: [Json, string][] = [
      [{ address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }, 'address'], // a Bitcoin address for ETH
      [{ asset: 'BTC' }, 'address'], // an Ethereum address for BTC
      [{ address: '0x1234' }, 'address'],
      [{ method: 'TELEPATHY' }, 'method'],
      [{ scheme: 'BIP322' }, 'scheme'],
      [{ vaspDid: 'did:ethr:0x0000000000000000000000000000000000000001' }, 'vaspDid'],
      [{ customerRef: 'Jane Doe, 1 Main St' }, 'customerRef'],
      [{ nonce: 'abc' }, 'nonce'],
    ];
    for (const [over, field] of cases) {
      const r = await create(over);
      expect([JSON.stringify(over), r.status, r.body.error?.field]).toEqual([JSON.stringify(over), 400, field]);
    }
  });

  it('a small deposit of the exact amount from the wallet verifies it; a wrong one leaves it PENDING with the reason', async () => {
    const wallet = ethereumWallet();
    const created = await create({ address: wallet.address, method: 'SMALL_DEPOSIT' });
    expect(created.status).toBe(201);
    const { deposit } = created.body.instructions;
    expect(deposit.address).toBe(DEPOSIT_ADDRESS);
    // About 1 USD at the embedded table's 3,000 USD per ETH: 0.8 to 1.2 USD in wei.
    const usd = (Number(deposit.amount) / 1e18) * 3000;
    expect(usd).toBeGreaterThanOrEqual(0.8);
    expect(usd).toBeLessThanOrEqual(1.2);
    expect(Date.parse(deposit.deadline)).toBeGreaterThan(Date.now() + 47 * 3_600_000);
    const path = `/v1/wallet-proofs/${created.body.id}/deposit-observed`;
    const txHash = `0x${randomBytes(32).toString('hex')}`;

    const decimals = await api('operator', 'POST', path, { txHash, from: wallet.address, amount: '0.0003' });
    expect(decimals.status).toBe(400);
    expect(decimals.body.error.field).toBe('amount');
    const otherChain = await api('operator', 'POST', path, {
      txHash,
      from: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      amount: deposit.amount,
    });
    expect(otherChain.status).toBe(400);
    expect(otherChain.body.error.field).toBe('from');

    const wrongAmount = await api('operator', 'POST', path, {
      txHash,
      from: wallet.address,
      amount: (BigInt(deposit.amount) + 1n).toString(),
    });
    expect(wrongAmount.status).toBe(200);
    expect(wrongAmount.body).toMatchObject({ status: 'PENDING' });
    expect(wrongAmount.body.reason).toMatch(/not the \d+ asked for/);
    const stranger = await api('operator', 'POST', path, {
      txHash,
      from: ethereumWallet().address,
      amount: deposit.amount,
    });
    expect(stranger.body).toMatchObject({ status: 'PENDING' });
    expect(stranger.body.reason).toMatch(/another address/);

    const right = await api('operator', 'POST', path, {
      txHash,
      from: wallet.address.toUpperCase().replace('0X', '0x'),
      amount: deposit.amount,
    });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ status: 'VERIFIED', reason: null });
    expect(right.body.evidence).toEqual({
      txHash,
      from: expect.any(String),
      amount: deposit.amount,
      // When the API received the report: the deadline is judged by it.
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('never opens two deposit tests with the same amount on one deposit address', async () => {
    const made = await Promise.all(Array.from({ length: 6 }, () => create({ method: 'SMALL_DEPOSIT' })));
    const amounts = made.map((m) => m.body.instructions.deposit.amount);
    expect(new Set(amounts).size).toBe(amounts.length);
  });

  it('a screenshot waits for compliance: an operator may not review it (403), a compliance officer approves it', async () => {
    const created = await create({ method: 'SCREENSHOT' });
    expect(created.status).toBe(201);
    expect(created.body.instructions.review.deadline).toEqual(expect.any(String));
    const path = `/v1/wallet-proofs/${created.body.id}/review`;
    const byOperator = await api('operator', 'POST', path, { decision: 'approve', reason: 'looks right' });
    expect(byOperator.status).toBe(403);
    const approved = await api('compliance', 'POST', path, { decision: 'approve', reason: 'wallet screen matches' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'VERIFIED', reason: 'wallet screen matches' });
    const audit = await auditActions(created.body.id);
    expect(audit.map((a) => a.action)).toEqual(['wallet-proof.create', 'wallet-proof.verified']);
    expect(audit[1]!.actor).toMatch(/^apikey:/);

    const declared = await create({ method: 'SELF_DECLARATION' });
    const rejected = await api('compliance', 'POST', `/v1/wallet-proofs/${declared.body.id}/review`, {
      decision: 'reject',
      reason: 'declaration unsigned',
    });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', reason: 'declaration unsigned' });
  });
});
