/**
 * The console's wallet proofs in Chromium (issue 22, item 5): proofs made through the API are listed, a compliance
 * officer approves a self-declaration in the page and the API then answers it VERIFIED, a signature's evidence reads
 * as labelled fields, an operator sees no review buttons (and a stale session claiming compliance gets the API's 403
 * as a clear message), and an outgoing transfer waiting for a proof says so on its page, with the newest proof of
 * the wallet its classification names.
 */
import { ethereumWallet } from '../harness/wallets';
import { mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createApiKey } from '../../client/api/auth/api-keys';
import { systemPrincipal, type Role } from '../../lib/principal';
import { createDidKeyRecord } from '../../lib/crypto';
import { launchBrowser, type TestBrowser } from '../harness/browser';
import { roleCall } from '../harness/http';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const ARTIFACTS = resolve(__dirname, '../../test-artifacts/console-proofs');
const ivms = JSON.parse(readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8')) as {
  originator: unknown;
  beneficiary: unknown;
};

describe('the console shows wallet ownership proofs, in Chromium (issue 22)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let browser: BrowserContext;
  let testBrowser: TestBrowser | undefined;
  // One customer of this run: the page is filtered by it, so proofs other suites left in the shared database never
  // push these off the first page.
  const customerRef = `cust-${randomBytes(6).toString('hex')}`;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const createProof = async (over: Record<string, unknown>) => {
    const created = await api('operator', 'POST', '/v1/wallet-proofs', {
      customerRef,
      asset: 'ETH',
      address: ethereumWallet().address,
      method: 'SELF_DECLARATION',
      vaspDid: g.subA,
      ...over,
    });
    expect(created.status).toBe(201);
    return created.body;
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.subA, privateKeyHex: createDidKeyRecord().keys[0].privateKeyHex }]),
      // Subsidiary A is in the EU: its transfers to a self-hosted wallet above 1,000 EUR wait for the wallet's proof.
      jurisdictions: { subsidiaryCountries: { [g.subA]: 'DE' } },
    });
    testBrowser = await launchBrowser({ width: 1500, height: 1000 });
    browser = testBrowser.context;
  });
  afterAll(async () => {
    await testBrowser?.close();
    await orch?.close();
    await sb?.close();
  });

  /** A new tab signed in with an API key of `role` (each tab keeps its own session). */
  async function signedIn(role: Role, name: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    const key = (await createApiKey(orch.pool, { name, role }, systemPrincipal('test'))).key;
    await page.goto(`${orch.apiUrl}/console`);
    await page.fill('#token', key);
    await page.click('#token-sign-in');
    await page.waitForSelector('#dashboard-title');
    return { page, problems };
  }

  /** The proofs page, filtered by this run's customer, with `status` chosen ('' is any). */
  async function openProofs(page: Page, status: string) {
    await page.click('nav a[href="#/wallet-proofs"]');
    await page.waitForSelector('#proofs-title');
    await page.fill('form.filters input[name=customerRef]', customerRef);
    await page.selectOption('form.filters select[name=status]', status);
    await page.click('form.filters button[type=submit]');
  }

  it('a compliance officer sees the proofs, reads a signature as fields, and approves a self-declaration', async () => {
    const declaration = await createProof({ method: 'SELF_DECLARATION' });
    const wallet = ethereumWallet();
    const signed = await createProof({ method: 'SIGNATURE', address: wallet.address });
    const signature = wallet.personalSign(signed.instructions.challenge.message);
    const verified = await api('operator', 'POST', `/v1/wallet-proofs/${signed.id}/signature`, { signature });
    expect(verified.body.status).toBe('VERIFIED');

    const { page, problems } = await signedIn('compliance', 'Carla Compliance');
    // By default the pending ones: the declaration, not the verified signature.
    await openProofs(page, 'PENDING');
    const row = page.locator(`#wallet-proofs tr[data-id="${declaration.id}"]`);
    await row.waitFor();
    expect(await page.locator(`#wallet-proofs tr[data-id="${signed.id}"]`).count()).toBe(0);
    expect(await row.locator('.method').textContent()).toContain('self-declaration');
    const address = row.locator('.address .mono');
    expect(await address.getAttribute('title')).toBe(declaration.address);
    expect((await address.textContent())!.length).toBeLessThan(declaration.address.length);
    expect(await row.locator('.status').textContent()).toBe('PENDING');
    // The review's deadline (escalation, then WALLET_PROOF_REVIEW_EXPIRY's 14 days) as the time left, in days.
    const days = Math.floor((Date.parse(declaration.challengeExpiresAt) - Date.now()) / 86_400_000);
    expect(await row.locator('.time-left').textContent()).toBe(`${days} d left`);

    // Approve, confirmed with a reason: the row shows the result, and the API agrees.
    await row.locator('button.approve').click();
    await row.locator('.review-confirm input.review-reason').fill('declaration signed by the customer');
    await row.locator('.review-confirm button.confirm').click();
    await row.locator('.status', { hasText: 'VERIFIED' }).waitFor();
    expect(await row.locator('button.approve').count()).toBe(0);
    const after = await api('viewer', 'GET', `/v1/wallet-proofs/${declaration.id}`);
    expect(after.body).toMatchObject({ status: 'VERIFIED', reason: 'declaration signed by the customer' });
    expect(after.body.evidence).toMatchObject({ decision: 'approve', reviewedBy: expect.stringMatching(/^apikey:/) });
    await page.screenshot({ path: join(ARTIFACTS, 'proofs-approved.png'), fullPage: true });

    // Any status: the verified signature too; its page shows the evidence as labelled fields, never JSON.
    await openProofs(page, '');
    const signedRow = page.locator(`#wallet-proofs tr[data-id="${signed.id}"]`);
    await signedRow.waitFor();
    expect(await signedRow.locator('.status').textContent()).toBe('VERIFIED');
    expect(await signedRow.locator('button.approve').count()).toBe(0);
    await signedRow.locator('.method a').click();
    await page.waitForSelector('#proof-facts');
    expect(await page.textContent('#proof-method')).toBe('signed message');
    expect(await page.textContent('#proof-scheme')).toBe('EIP191');
    expect(await page.textContent('#proof-address')).toBe(signed.address);
    expect(await page.getAttribute('#evidence-signature', 'title')).toBe(signature);
    expect((await page.textContent('#evidence-signature'))!.length).toBeLessThan(30);
    expect(await page.textContent('main')).not.toContain('{"');

    // The approved declaration's page: reviewer and decision.
    await page.goto(`${orch.apiUrl}/console#/wallet-proof/${declaration.id}`);
    await page.locator('#evidence-decision', { hasText: 'approved' }).waitFor();
    expect(await page.textContent('#evidence-reviewer')).toBe(after.body.evidence.reviewedBy);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('an operator sees no review buttons; a session that still claims compliance gets the 403 as a clear message', async () => {
    const pending = await createProof({ method: 'SCREENSHOT' });
    const { page } = await signedIn('operator', 'Otto Operator');
    await openProofs(page, 'PENDING');
    const row = page.locator(`#wallet-proofs tr[data-id="${pending.id}"]`);
    await row.waitFor();
    expect(await row.locator('.method').textContent()).toContain('screenshot');
    expect(await row.locator('button.approve, button.reject').count()).toBe(0);
    await page.goto(`${orch.apiUrl}/console#/wallet-proof/${pending.id}`);
    await page.waitForSelector('#proof-facts');
    expect(await page.locator('button.approve, button.reject').count()).toBe(0);

    // The console shows buttons by the roles of the session; the API decides by the key. A session whose roles are out
    // of date (the key's role changed since sign-in) shows the buttons, and the API's refusal reads plainly.
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('tro-console-session')!);
      sessionStorage.setItem('tro-console-session', JSON.stringify({ ...s, roles: ['compliance'] }));
    });
    await page.reload();
    await page.click('button.reject');
    await page.fill('.review-confirm input.review-reason', 'blurred screenshot');
    await page.click('.review-confirm button.confirm');
    const alert = page.locator('.review-confirm [role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Only the compliance role may approve or reject a proof');
    expect((await api('viewer', 'GET', `/v1/wallet-proofs/${pending.id}`)).body.status).toBe('PENDING');
    await page.close();
  });

  it("an outgoing transfer waiting for a proof says so on its page, with the wallet's newest proof", async () => {
    // A real transfer of 1,500 EUR of ETH from subsidiary A (in the EU: a proof above 1,000 EUR) to a self-hosted
    // wallet: the workflow holds it in AWAITING_PROOF, and its stored classification names the wallet.
    const wallet = ethereumWallet();
    const id = `proof-wait-${randomBytes(4).toString('hex')}`;
    const started = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: ((1500n * 10n ** 18n) / 2760n).toString(), // 3,000 USD per ETH, 0.92 EUR per USD
        originatorVASPdid: g.subA,
        originatorRef: customerRef,
        isNonCustodial: true,
        transactionBlockchainInfo: { destination: wallet.address },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
      }),
    });
    expect(started.status).toBe(202);
    await eventually(async () =>
      (await api('viewer', 'GET', `/v1/transfers/${id}`)).body.status === 'AWAITING_PROOF' ? true : undefined,
    );
    const proof = await createProof({ address: wallet.address });
    const { page } = await signedIn('viewer', 'Vera Viewer');
    await page.goto(`${orch.apiUrl}/console#/transfer/outgoing-${id}`);
    await page.waitForSelector('#ownership-proof');
    expect(await page.textContent('#awaiting-proof')).toContain('waits for a verified ownership proof');
    await page.waitForSelector('#ownership-proof-link');
    expect(await page.textContent('#ownership-proof-link')).toBe(proof.id);
    expect(await page.textContent('#ownership-proof-status')).toContain('PENDING');
    await page.close();
  });
});
