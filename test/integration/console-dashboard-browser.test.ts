/**
 * The console's first page, the KPI dashboard, in Chromium: after 12 scripted transfers (written through the
 * projection's own store as the workflows' recordTransferView activity writes them, as test/integration/kpis.test.ts
 * does), it shows the exact KPIs of the group and of one subsidiary, and draws their series with uPlot.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { writeTransferViewUpdate } from '../../transfer-view/store';
import type { TransferViewUpdate } from '../../transfer-view/types';
import { createApiKey } from '../../client/api/auth/api-keys';
import { systemPrincipal } from '../../lib/principal';
import { launchBrowser, type TestBrowser } from '../harness/browser';
import {
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const ARTIFACTS = resolve(__dirname, '../../test-artifacts/console-dashboard');
const DAY = 86_400_000;

describe('the console dashboard in Chromium (issue 24)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let browser: BrowserContext;
  let testBrowser: TestBrowser | undefined;
  // A window of its own: nothing else in the shared database is created on these days.
  const day1 = new Date(Date.UTC(2002, 0, 1) + Math.floor(Math.random() * 1500) * 2 * DAY);
  const day2 = new Date(day1.getTime() + DAY);
  const iso = (d: Date) => d.toISOString().slice(0, 10);

  /** One transfer's successive projection entries, written in order. */
  async function script(
    n: number,
    base: Partial<TransferViewUpdate> & { direction: 'incoming' | 'outgoing'; createdAt: string },
    steps: Partial<TransferViewUpdate>[],
  ) {
    let version = 0;
    for (const step of steps) {
      version += 1;
      await writeTransferViewUpdate(orch.pool, {
        workflowId: `dash-${day1.getTime()}-${n}`,
        id: `dash-${n}`,
        status: 'RECEIVED',
        final: false,
        needsReview: false,
        needsRouting: false,
        escalated: false,
        subsidiaryDid: g.subA,
        asset: 'ETH',
        version,
        ...base,
        ...step,
      });
    }
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    });
    const out = (at: Date) => ({ direction: 'outgoing' as const, createdAt: at.toISOString() });
    const cp = 'did:ethr:0x00000000000000000000000000000000000000c1';
    const sys = { decidedBy: 'system' as const, decisionAction: 'APPROVE' };
    const sent = { transactionId: 'tx', counterpartyDid: cp, status: 'SENT' };
    // The 10 transfers of test/integration/kpis.test.ts, of the first subsidiary.
    for (const n of [1, 2]) {
      await script(n, out(day1), [
        { status: 'PREPARED', ...sys },
        { ...sent, ...sys },
        { ...sent, ...sys, status: 'ACCEPTED', final: true },
      ]);
    }
    await script(3, { ...out(day1), asset: 'BTC' }, [
      { status: 'PREPARED', ...sys },
      { ...sent, ...sys },
      { ...sent, ...sys, status: 'DECLINED' },
    ]);
    await script(4, out(day1), [
      { status: 'PREPARED', ...sys },
      { transactionId: 'tx', status: 'SENT', ...sys },
      { transactionId: 'tx', status: 'REJECTED', ...sys },
    ]);
    await script(5, out(day1), [
      { status: 'PREPARED', ...sys },
      { ...sent, ...sys },
    ]);
    await script(6, out(day2), [{ status: 'HELD', needsReview: true, counterpartyDid: cp }]);
    await script(7, out(day2), [
      { status: 'HELD', needsReview: true, counterpartyDid: cp },
      { status: 'REFUSED', counterpartyDid: cp, decidedBy: 'person', decisionAction: 'refuse', final: true },
    ]);
    const person = { decidedBy: 'person' as const, decisionAction: 'release' };
    await script(8, out(day2), [
      { status: 'HELD', needsReview: true, counterpartyDid: cp },
      { ...sent, ...person },
      { ...sent, ...person, status: 'ACCEPTED' },
    ]);
    const inc = { direction: 'incoming' as const, createdAt: day2.toISOString() };
    await script(9, inc, [
      { transactionId: 'tx', counterpartyDid: cp, status: 'SENT' },
      { transactionId: 'tx', counterpartyDid: cp, status: 'ACCEPTED', decidedBy: 'system', decisionAction: 'approve' },
    ]);
    await script(10, inc, [{ transactionId: 'tx', status: 'SENT', needsReview: true }]);
    // Two of the second subsidiary: both incoming, accepted by the policy.
    for (const n of [11, 12]) {
      await script(n, { ...inc, subsidiaryDid: g.subB, asset: 'USDC' }, [
        { transactionId: 'tx', counterpartyDid: cp, status: 'SENT' },
        {
          transactionId: 'tx',
          counterpartyDid: cp,
          status: 'ACCEPTED',
          decidedBy: 'system',
          decisionAction: 'approve',
        },
      ]);
    }
    testBrowser = await launchBrowser({ width: 1400, height: 1000 });
    browser = testBrowser.context;
  });
  afterAll(async () => {
    await testBrowser?.close();
    await orch?.close();
    await sb?.close();
  });

  const tile = async (page: Page, id: string) =>
    (await page.textContent(`#${id} .tile-value`))?.replace(/\s+/g, ' ').trim();
  /** How many pixels of the chart's canvas are drawn on (uPlot draws its series and axes there). */
  const inked = (page: Page, chart: string) =>
    page.evaluate(`(() => {
      const c = document.querySelector('#${chart} canvas');
      if (!c || !c.width || !c.height) return 0;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    })()`) as Promise<number>;

  it('a viewer opens the console on the dashboard and reads the exact KPIs, for the group and one subsidiary, with charts', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const key = (await createApiKey(orch.pool, { name: 'Dana Dashboard', role: 'viewer' }, systemPrincipal('test')))
      .key;
    await page.goto(`${orch.apiUrl}/console`);
    // No identity provider here: the page asks for a token straight away.
    await page.fill('#token', key);
    await page.click('#token-sign-in');
    // The first page is the dashboard.
    await page.waitForSelector('#dashboard-title');
    expect(await page.getAttribute('nav a[aria-current=page]', 'href')).toBe('#/dashboard');

    // The whole group over the two days: all 12 transfers.
    await page.fill('#kpi-filters input[name=from]', iso(day1));
    await page.fill('#kpi-filters input[name=to]', iso(day2));
    await page.click('#kpi-filters button[type=submit]');
    await page.locator('#kpi-total .tile-value', { hasText: /^12$/ }).waitFor();
    expect(await tile(page, 'kpi-responseRate')).toBe('80.0 %'); // 8 answered of 10 sent
    expect(await tile(page, 'kpi-successRate')).toBe('50.0 %'); // 6 of 12
    expect(await tile(page, 'kpi-identificationRate')).toBe('83.3 %'); // 10 of 12
    expect(await tile(page, 'kpi-automationRate')).toBe('80.0 %'); // 8 of 10 decided
    expect(await page.textContent('#kpi-by-type tr[data-key=USDC]')).toContain('2');

    // One subsidiary: the 10 transfers of kpis.test.ts, exactly its KPIs.
    await page.selectOption('#kpi-filters select[name=subsidiary]', g.subA);
    await page.click('#kpi-filters button[type=submit]');
    await page.locator('#kpi-total .tile-value', { hasText: /^10$/ }).waitFor();
    expect(await tile(page, 'kpi-responseRate')).toBe('75.0 %');
    expect(await tile(page, 'kpi-successRate')).toBe('40.0 %');
    expect(await tile(page, 'kpi-identificationRate')).toBe('80.0 %');
    expect(await tile(page, 'kpi-automationRate')).toBe('75.0 %');
    expect(await page.textContent('#kpi-total')).toContain('8 sent, 6 answered, 4 accepted');
    const statuses = await page
      .locator('#kpi-by-status tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-key'), Number(r.children[1]!.textContent)]));
    expect(Object.fromEntries(statuses)).toEqual({
      ACCEPTED: 4,
      DECLINED: 1,
      REJECTED: 1,
      SENT: 2,
      HELD: 1,
      REFUSED: 1,
    });

    // The charts: one point per day, drawn on their canvases, with a legend naming each series.
    for (const chart of ['chart-rates', 'chart-volume']) {
      await page.locator(`#${chart} canvas`).waitFor();
      expect(await page.getAttribute(`#${chart}`, 'data-points')).toBe('2');
      expect(await inked(page, chart)).toBeGreaterThan(500);
    }
    expect(await page.textContent('#chart-rates .u-legend')).toContain('Automation rate');
    expect(await page.textContent('#chart-volume .u-legend')).toContain('decided by a person');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-one-subsidiary.png'), fullPage: true });

    // Per hour: the same transfers, one point per hour that has some (all were created at midnight UTC).
    await page.selectOption('#kpi-filters select[name=bucket]', 'hour');
    await page.click('#kpi-filters button[type=submit]');
    await page.locator('#chart-volume .u-title', { hasText: 'per hour' }).waitFor();
    expect(await page.getAttribute('#chart-rates', 'data-points')).toBe('2');
    expect(await tile(page, 'kpi-total')).toBe('10');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("the console speaks its readers' language: amounts in the asset's units with their USD value, audit details as labelled fields", async () => {
    // A transfer of 2.5 ETH waiting for a review (so in the queue too), and a counterparty reviewed through the API.
    const txId = `dash-amount-${day1.getTime()}`;
    await script(
      13,
      { direction: 'incoming', createdAt: day2.toISOString(), id: txId, workflowId: `incoming-${txId}` },
      [
        {
          transactionId: txId,
          status: 'ACK',
          needsReview: true,
          amount: '2500000000000000000',
          counterpartyDid: g.external,
        },
      ],
    );
    const reviewed = randomDid();
    const put = await fetch(`${orch.apiUrl}/v1/counterparties/${encodeURIComponent(reviewed)}`, {
      method: 'PUT',
      headers: orch.headers('compliance', { 'content-type': 'application/json' }),
      body: JSON.stringify({ reviewValue: 'BLOCKED', note: 'shell company', jurisdiction: 'DE' }),
    });
    expect(put.status).toBe(200);
    const config = (await (
      await fetch(`${orch.apiUrl}/console/config.json`, { headers: orch.headers('viewer') })
    ).json()) as {
      assets: Record<string, { decimals: number; priceUSD: number | null }>;
    };
    expect(config.assets.ETH!.decimals).toBe(18);
    const usd = (2.5 * config.assets.ETH!.priceUSD!).toLocaleString('en', { maximumFractionDigits: 2 });

    const page = await browser.newPage();
    const key = (await createApiKey(orch.pool, { name: 'Lena Reader', role: 'compliance' }, systemPrincipal('test')))
      .key;
    await page.goto(`${orch.apiUrl}/console`);
    await page.fill('#token', key);
    await page.click('#token-sign-in');
    await page.waitForSelector('#dashboard-title');

    // The transfer list.
    await page.goto(`${orch.apiUrl}/console#/transfers`);
    await page.fill('form.filters input[name=q]', txId);
    await page.click('form.filters button[type=submit]');
    const row = page.locator(`#transfers tr[data-workflow="incoming-${txId}"]`);
    await row.waitFor();
    expect((await row.locator('.amount').textContent())?.replace(/\s+/g, ' ')).toBe(`2.5 ETH ≈ ${usd} USD`);
    expect(await row.locator('.amount').getAttribute('title')).toBe('2500000000000000000 base units');
    // VASPs by their directory names, the DID on hover.
    const counterparty = row.locator('.counterparty .vasp', { hasText: 'External VASP' });
    await counterparty.waitFor();
    expect(await counterparty.getAttribute('title')).toBe(g.external);
    // The review queue.
    await page.goto(`${orch.apiUrl}/console#/queue`);
    const queued = page.locator(`#queue tr[data-id="${txId}"]`);
    await queued.waitFor();
    expect(await queued.locator('.amount').textContent()).toContain('2.5 ETH');
    await queued.locator('.counterparty .vasp', { hasText: 'External VASP' }).waitFor();
    // The transfer's page.
    await page.goto(`${orch.apiUrl}/console#/transfer/incoming-${txId}`);
    await page
      .locator('#amount', { hasText: '2.5 ETH' })
      .waitFor()
      .catch(async (e: Error) => {
        await page.screenshot({ path: join(ARTIFACTS, 'transfer-page-failed.png'), fullPage: true });
        throw new Error(`${e.message}\n${await page.textContent('main')}`);
      });
    expect(await page.textContent('#amount')).toContain(`${usd} USD`);
    await page.locator('#subsidiary .vasp', { hasText: 'Subsidiary A' }).waitFor();
    expect(await page.getAttribute('#subsidiary .vasp', 'title')).toBe(g.subA);
    await page.locator('#counterparty .vasp', { hasText: 'External VASP' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'transfer-amount-in-units.png'), fullPage: true });

    // The audit log: the review's details as labelled fields, not JSON.
    await page.goto(`${orch.apiUrl}/console#/audit`);
    await page.fill('form.filters input[name=subject]', reviewed);
    await page.click('form.filters button[type=submit]');
    const details = page.locator('#audit td.details dl.fields').first();
    await details.waitFor();
    const labels = await details.locator('dt').allTextContents();
    const values = await details.locator('dd').allTextContents();
    const fields = Object.fromEntries(labels.map((l, i) => [l, values[i]]));
    expect(Object.values(fields)).toContain('BLOCKED');
    expect(Object.values(fields)).toContain('shell company');
    expect(await page.textContent('#audit td.details')).not.toContain('{"');
    await page.screenshot({ path: join(ARTIFACTS, 'audit-labelled-fields.png'), fullPage: true });
    await page.close();
  });
});
