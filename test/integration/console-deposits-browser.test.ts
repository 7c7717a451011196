/**
 * The console's deposits in Chromium (issue 23, item 7): deposits reported through the API are listed, the held ones
 * by default with their data deadline and the time left (overdue marked once it passed), a deposit's page shows its
 * facts, a compliance officer releases or returns a held deposit with a reason (POST /v1/deposits/:id/decision), and
 * a viewer sees no release or return buttons.
 */
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createApiKey } from '../../client/api/auth/api-keys';
import { systemPrincipal, type Role } from '../../lib/principal';
import { launchBrowser, type TestBrowser } from '../harness/browser';
import { bearerCall, roleCall } from '../harness/http';
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

const ARTIFACTS = resolve(__dirname, '../../test-artifacts/console-deposits');
/** 1.5 ETH: above FATF's 1,000 USD threshold at the embedded price table's ETH price. */
const ABOVE = '1500000000000000000';
/** 0.0001 ETH: below it. */
const BELOW = '100000000000000';
const HOUR = 3_600_000;

describe('the console lists held deposits with their deadlines, in Chromium (issue 23)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let browser: BrowserContext;
  let testBrowser: TestBrowser | undefined;

  const api = (role: Role, method: string, path: string, body?: unknown) => roleCall(orch, role, method, path, body);
  const evm = () => `0x${randomBytes(20).toString('hex')}`;
  /** A fresh address of subsidiary A in the group's registry. */
  const ownAddress = async () => {
    const address = evm();
    const r = await bearerCall(orch.apiUrl, orch.apiKeys.admin, 'PUT', '/v1/addresses', {
      addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: `cust-${address.slice(-6)}` }],
    });
    expect(r).toMatchObject({ status: 200, body: { inserted: 1 } });
    return address;
  };
  const until = (id: string, status: string) =>
    eventually(
      async () => {
        const d = (await api('viewer', 'GET', `/v1/deposits/${id}`)).body;
        return d.status === status ? d : undefined;
      },
      30_000,
      200,
    );
  /** A deposit to subsidiary A whose originator never sends its data: it waits AWAITING_DATA for an hour. */
  const waitingDeposit = async (): Promise<Json> => {
    const to = await ownAddress();
    const configured = await fetch(`${sb.url}/sandbox/counterparties/${g.external}/deposits`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ [to]: 'never' }),
    });
    expect(configured.status).toBe(200);
    const created = await api('operator', 'POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      amount: ABOVE,
      to,
    });
    expect(created.status).toBe(201);
    return until(created.body.id, 'AWAITING_DATA');
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      deposits: { matchWindowMs: 120_000, dataDeadlineMs: HOUR, recheckInitialMs: 500, recheckMaxMs: 60_000 },
    });
    await sb.simulateCounterparty(g.external);
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

  /**
   * The deposits page, subsidiary A's only (deposits other suites left in the shared database never push this run's
   * off the first page), with `status` chosen ('held' is the default, '' any).
   */
  async function openDeposits(page: Page, status = 'held') {
    await page.click('nav a[href="#/deposits"]');
    await page.waitForSelector('#deposits-title');
    expect(await page.inputValue('form.filters select[name=status]')).toBe('held');
    await page.selectOption('form.filters select[name=subsidiary]', g.subA);
    await page.selectOption('form.filters select[name=status]', status);
  }

  it('held deposits are listed by default with their deadline and time left; a viewer sees no buttons', async () => {
    const waiting = await waitingDeposit();
    const small = await api('operator', 'POST', '/v1/deposits', {
      vaspDid: g.subA,
      asset: 'ETH',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      amount: BELOW,
      to: await ownAddress(),
    });
    expect(small.status).toBe(201);
    const released = await until(small.body.id, 'RELEASED');

    const { page, problems } = await signedIn('viewer', 'Vera Viewer');
    await openDeposits(page);
    const row = page.locator(`#deposits tr[data-id="${waiting.id}"]`);
    await row.waitFor();
    // Held by default: the released deposit is not among them.
    expect(await page.locator(`#deposits tr[data-id="${released.id}"]`).count()).toBe(0);
    expect(await row.locator('.subsidiary').textContent()).toBe('Subsidiary A');
    expect(await row.locator('.asset').textContent()).toBe(`${waiting.chain} / ETH`);
    expect(await row.locator('.deposit-amount').textContent()).toContain('1.5 ETH');
    expect(await row.locator('.destination .mono').getAttribute('title')).toBe(waiting.to);
    expect(await row.locator('.status').textContent()).toBe('AWAITING_DATA');
    expect(await row.locator('.deadline .deadline-at').textContent()).toBe(
      await page.evaluate((iso) => new Date(iso).toLocaleString(), waiting.dataDeadlineAt),
    );
    // An hour from the report: 59 or 60 minutes left, and nothing overdue.
    expect(await row.locator('.time-left').textContent()).toMatch(/^(59|60) min left$/);
    expect(await row.locator('.overdue').count()).toBe(0);
    // A viewer may read, not decide.
    expect(await row.locator('button.release, button.return').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'deposits-held.png'), fullPage: true });

    // The released deposit under its own status, with no deadline counting down.
    await openDeposits(page, 'RELEASED');
    const releasedRow = page.locator(`#deposits tr[data-id="${released.id}"]`);
    await releasedRow.waitFor();
    expect(await page.locator(`#deposits tr[data-id="${waiting.id}"]`).count()).toBe(0);
    expect(await releasedRow.locator('.status').textContent()).toBe('RELEASED');
    expect(await releasedRow.locator('.reason').textContent()).toMatch(/below/);
    expect(await releasedRow.locator('.time-left, .overdue').count()).toBe(0);

    // The waiting deposit's own page: its facts, and no buttons for a viewer.
    await page.goto(`${orch.apiUrl}/console#/deposit/${waiting.id}`);
    await page.waitForSelector('#deposit-facts');
    expect(await page.textContent('#deposit-status')).toBe('AWAITING_DATA');
    expect(await page.textContent('#deposit-to')).toBe(waiting.to);
    expect(await page.textContent('#deposit-subsidiary')).toBe('Subsidiary A');
    expect(await page.textContent('#deposit-network')).toContain(`${waiting.transactionId} INCOMPLETE`);
    expect(await page.textContent('#deposit-deadline')).toMatch(/(59|60) min left/);
    expect(await page.locator('button.release, button.return').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('a compliance officer returns a held deposit with a reason, and releases one on its page', async () => {
    const toReturn = await waitingDeposit();
    const toRelease = await waitingDeposit();
    const { page, problems } = await signedIn('compliance', 'Carla Compliance');
    await openDeposits(page);
    const row = page.locator(`#deposits tr[data-id="${toReturn.id}"]`);
    await row.waitFor();

    // A reason is required: nothing is sent without one.
    await row.locator('button.return').click();
    await row.locator('.deposit-confirm button.confirm').click();
    expect(await row.locator('.deposit-confirm [role=alert]').textContent()).toContain('A reason is required');
    expect((await api('viewer', 'GET', `/v1/deposits/${toReturn.id}`)).body.status).toBe('AWAITING_DATA');

    await row.locator('.deposit-confirm input.deposit-reason').fill('originator unknown to the group');
    await row.locator('.deposit-confirm button.confirm').click();
    await row.locator('.status', { hasText: 'RETURN_REQUIRED' }).waitFor();
    expect(await row.locator('.reason').textContent()).toBe('originator unknown to the group');
    expect(await row.locator('button.release, button.return, .time-left').count()).toBe(0);
    const returned = (await api('viewer', 'GET', `/v1/deposits/${toReturn.id}`)).body;
    expect(returned).toMatchObject({
      status: 'RETURN_REQUIRED',
      reason: 'originator unknown to the group',
      decidedBy: expect.stringMatching(/^apikey:/),
    });
    await page.screenshot({ path: join(ARTIFACTS, 'deposit-returned.png'), fullPage: true });

    // Its page says the return is not confirmed yet; once the custody system confirms it, RETURNED with the hash.
    await page.goto(`${orch.apiUrl}/console#/deposit/${toReturn.id}`);
    await page.waitForSelector('#deposit-return');
    expect(await page.textContent('#deposit-return')).toContain('not confirmed by the custody system yet');
    const returnTx = `0x${'cd'.repeat(32)}`;
    expect((await api('operator', 'POST', `/v1/deposits/${toReturn.id}/returned`, { txHash: returnTx })).status).toBe(
      200,
    );
    await page.locator('#deposit-status', { hasText: 'RETURNED' }).waitFor();
    expect(await page.textContent('#deposit-return')).toContain(`sent back in ${returnTx}`);

    // On a deposit's own page: released, and the page shows who decided.
    await page.goto(`${orch.apiUrl}/console#/deposit/${toRelease.id}`);
    await page.waitForSelector('#deposit-facts');
    await page.click('button.release');
    await page.fill('.deposit-confirm input.deposit-reason', 'originator data received by e-mail');
    await page.click('.deposit-confirm button.confirm');
    await page.locator('#deposit-status', { hasText: 'RELEASED' }).waitFor();
    expect(await page.textContent('#deposit-reason')).toBe('originator data received by e-mail');
    const released = (await api('viewer', 'GET', `/v1/deposits/${toRelease.id}`)).body;
    expect(released).toMatchObject({ status: 'RELEASED', decidedBy: expect.stringMatching(/^apikey:/) });
    expect(await page.textContent('#deposit-decided')).toContain(`by ${released.decidedBy}`);
    expect(await page.locator('button.release, button.return').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('a deposit decided meanwhile answers 409 as a plain message; a stale session claiming compliance gets the 403', async () => {
    const decided = await waitingDeposit();
    const { page } = await signedIn('compliance', 'Carla Compliance');
    await openDeposits(page);
    const row = page.locator(`#deposits tr[data-id="${decided.id}"]`);
    await row.waitFor();
    // Another officer returns it while this page still shows it held.
    const first = await api('compliance', 'POST', `/v1/deposits/${decided.id}/decision`, {
      decision: 'return',
      reason: 'returned by another officer',
    });
    expect(first.status).toBe(200);
    await row.locator('button.release').click();
    await row.locator('.deposit-confirm input.deposit-reason').fill('data complete');
    await row.locator('.deposit-confirm button.confirm').click();
    await page.locator('[role=status]', { hasText: 'already decided' }).waitFor();
    await row.locator('.status', { hasText: 'RETURN_REQUIRED' }).waitFor();
    expect((await api('viewer', 'GET', `/v1/deposits/${decided.id}`)).body).toMatchObject({
      status: 'RETURN_REQUIRED',
      reason: 'returned by another officer',
    });
    await page.close();

    // The console shows buttons by the session's roles; the API decides by the key's.
    const held = await waitingDeposit();
    const viewer = await signedIn('viewer', 'Vera Viewer');
    await viewer.page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('tro-console-session')!);
      sessionStorage.setItem('tro-console-session', JSON.stringify({ ...s, roles: ['compliance'] }));
    });
    await viewer.page.goto(`${orch.apiUrl}/console#/deposit/${held.id}`);
    await viewer.page.reload();
    await viewer.page.waitForSelector('#deposit-facts');
    await viewer.page.click('button.return');
    await viewer.page.fill('.deposit-confirm input.deposit-reason', 'not allowed');
    await viewer.page.click('.deposit-confirm button.confirm');
    const alert = viewer.page.locator('.deposit-confirm [role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Only the compliance role may release or return a deposit');
    expect((await api('viewer', 'GET', `/v1/deposits/${held.id}`)).body.status).toBe('AWAITING_DATA');
    await viewer.page.close();
  });

  it('a deposit still held after its deadline is marked overdue', async () => {
    const waiting = await waitingDeposit();
    const { page, problems } = await signedIn('viewer', 'Vera Viewer');
    // The browser's clock two hours on: the deadline passed an hour ago while the workflow (on the real clock) waits.
    await page.clock.setFixedTime(Date.parse(waiting.dataDeadlineAt) + HOUR + 60_000);
    await openDeposits(page);
    const row = page.locator(`#deposits tr[data-id="${waiting.id}"]`);
    await row.waitFor();
    expect(await row.locator('.deadline .overdue').textContent()).toBe('overdue by 61 min');
    expect(await row.locator('.time-left').count()).toBe(0);
    await page.goto(`${orch.apiUrl}/console#/deposit/${waiting.id}`);
    await page.waitForSelector('#deposit-facts');
    expect(await page.textContent('#deposit-deadline .overdue')).toBe('overdue by 61 min');
    expect(problems).toEqual([]);
    await page.close();
  });
});
