import { launchBrowser, type TestBrowser } from '../harness/browser';
import { bearerCall } from '../harness/http';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { loadSdnList } from '../../screening/load-sdn';
import { createDidKeyRecord } from '../../lib/crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import {
  eventually,
  groupSeed,
  operatorSeed,
  randomDid,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { createApiKey } from '../../client/api/auth/api-keys';
import { systemPrincipal, type Role } from '../../lib/principal';

const SAMPLE = resolve(__dirname, '../../data/sanctions');
/** Screenshots of every step, kept as the run's artifacts (gitignored). */
const ARTIFACTS = resolve(__dirname, '../../test-artifacts/console');
const evm = () => `0x${randomBytes(20).toString('hex')}`;

describe('the compliance console in Chromium: a reviewer declines the sanctioned transfer; the queue refreshes itself', () => {
  const g = groupSeed();
  // People sign in at the identity provider (the sandbox's, as with npm start); the console is its public client.
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  g.seed.operatorApps = [{ clientId: 'travel-rule-console', redirectUris: ['http://127.0.0.1/console/'] }];
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;
  let browser: BrowserContext;
  let testBrowser: TestBrowser | undefined;

  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  /** An API key per person and role: the console and the audit log name its holder. */
  const keys = new Map<string, string>();
  const keyOf = async (name: string, role: Role) => {
    if (!keys.has(`${name}|${role}`))
      keys.set(`${name}|${role}`, (await createApiKey(orch.pool, { name, role }, systemPrincipal('console-test'))).key);
    return keys.get(`${name}|${role}`)!;
  };
  const api = (method: string, path: string, body?: unknown, token = orch.apiKeys.admin) =>
    bearerCall(orch.apiUrl, token, method, path, body);
  /** A transfer from a sanctioned originator to a subsidiary's address, held for review. */
  const sanctioned = async () => {
    const address = evm();
    expect(
      (
        await api('PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: `c-${address.slice(-6)}` }],
        })
      ).status,
    ).toBe(200);
    const { id } = await simulateTransfer(sb, {
      from: g.external,
      to: g.gateway,
      destination: address,
      originatorName: ['Ivan', 'Petrov'],
    });
    await eventually(
      async () => ((await api('GET', `/v1/transfers/list/incoming-${id}`)).body.needsReview ? true : undefined),
      30_000,
    );
    return id;
  };
  let step = 0;
  const shot = async (page: Page, name: string) => {
    await page.screenshot({ path: join(ARTIFACTS, `${String(++step).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
  /** With an API key pasted into the page (services, or people without an account at the provider). */
  const signIn = async (page: Page, name: string, role: Role) => {
    await page.goto(`${orch.apiUrl}/console`);
    await page.click('summary');
    await page.fill('#token', await keyOf(name, role));
    await page.click('#token-sign-in');
    await page.waitForSelector('#who');
  };
  /** At the identity provider's own page: the authorization code flow with PKCE, back to the console. */
  const signInAtProvider = async (
    page: Page,
    who: { email?: string; clientSecret: string },
    password = who.clientSecret,
  ) => {
    await page.goto(`${orch.apiUrl}/console`);
    await page.click('#provider-sign-in');
    await page.waitForURL((u) => u.href.startsWith(`${sb.url}/oidc/authorize`));
    await page.fill('#username', who.email!);
    await page.fill('#password', password);
    await page.click('#sign-in');
  };

  beforeAll(async () => {
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '1h',
        routeGiveUpAfter: '1h',
        reviewDeadline: '4h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      auth: { oidc: { ...sandboxOidc(sb).oidc!, consoleClientId: 'travel-rule-console' } },
    });
    gwToken = await sb.token(g.gatewayUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
    await loadSdnList(orch.pool, {
      list: 'console-browser',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });
    testBrowser = await launchBrowser({ width: 1400, height: 900 });
    browser = testBrowser.context;
  });
  afterAll(async () => {
    await testBrowser?.close();
    await orch?.close();
    await sb?.close();
  });

  it('a reviewer signs in, finds the sanctioned transfer in the queue, reads its hits and declines it with a reason', async () => {
    const id = await sanctioned();
    const page = await browser.newPage();
    const problems: string[] = [];
    // Script errors and CSP refusals; not the provider's 401 for the wrong password, nor a missing favicon.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    // A wrong password stays at the provider, with its message; the right one comes back signed in.
    await signInAtProvider(page, operators.compliance, 'not-the-password');
    await page.waitForSelector('#error');
    expect(await page.textContent('#error')).toContain('wrong password');
    await shot(page, 'provider-refuses-a-wrong-password');
    await page.fill('#password', operators.compliance.clientSecret);
    await page.click('#sign-in');
    await page.waitForSelector('#who', { timeout: 30_000 }).catch((e: Error) => {
      throw new Error(`${e.message}\nat ${page.url()}; page errors: ${problems.join(' | ')}`);
    });
    expect(problems).toEqual([]);
    // The code and state are gone from the address bar.
    expect(new URL(page.url()).search).toBe('');
    expect(await page.textContent('#who')).toContain('Maya Compliance');
    expect(await page.textContent('#role')).toBe('compliance');
    await shot(page, 'signed-in-at-the-provider');
    // The first page is the KPI dashboard (console-dashboard-browser.test.ts); the queue is one link away.
    await page.click('nav a[href="#/queue"]');
    const row = page.locator(`#queue tr[data-id="${id}"]`);
    await row.waitFor();
    expect(await row.locator('.hits').textContent()).toContain('PETROV, Ivan');
    await shot(page, 'queue-with-the-sanctioned-transfer');

    await row.locator('a').click();
    await page.waitForSelector('#decision-form');
    expect(await page.textContent('#hits')).toContain('PETROV, Ivan');
    expect(await page.textContent('#status')).toContain('awaiting-review');
    await shot(page, 'transfer-page-held-for-review');
    // A compliance role reads the decrypted IVMS101: the originator's name is in it.
    await page.click('#show-pii');
    await page.waitForSelector('#pii');
    expect(await page.textContent('#pii')).toContain('Petrov');
    await shot(page, 'personal-data-decrypted');

    // Keyboard only: the decline radio, the reason, the submit button; first without a reason.
    await page.focus('input[value=decline]');
    await page.keyboard.press('Space');
    await page.click('#decide');
    await page.waitForSelector('#decision-form .message.error');
    expect(await page.textContent('#decision-form .message.error')).toContain('A reason is required');
    await shot(page, 'empty-reason-refused');

    await page.focus('#reason');
    await page.keyboard.type('Confirmed match with the SDN entry: same name and date of birth');
    await page.focus('#decide');
    await page.keyboard.press('Enter');
    // Locators, not waitForFunction: the page's Content-Security-Policy forbids the eval that a string predicate needs.
    await page.locator('#status', { hasText: 'DECLINED' }).waitFor({ timeout: 30_000 });
    expect(await page.textContent('#decision')).toContain('Declined by Maya Compliance');
    await shot(page, 'declined-by-the-reviewer');

    const atNetwork = await sandboxCall('GET', `/tx/info?id=${id}`);
    expect(atNetwork.status).toBe('DECLINED');
    const view = (await api('GET', `/v1/transfers/list/incoming-${id}`)).body;
    expect(view).toMatchObject({
      status: 'DECLINED',
      decision: {
        // Recorded by the provider's subject; the name is shown beside it.
        decision: 'decline',
        actor: `oidc:${operators.compliance.subject}`,
        principal: {
          kind: 'oidc',
          subject: operators.compliance.subject,
          name: 'Maya Compliance',
          roles: ['compliance'],
        },
      },
    });

    // The decision is in the audit log, found by its subject.
    await page.goto(`${orch.apiUrl}/console#/audit`);
    await page.fill('input[name=subject]', id);
    await page.click('form.filters button[type=submit]');
    await page.locator('#audit', { hasText: 'incoming.decline' }).waitFor({ timeout: 10_000 });
    expect(await page.textContent('#audit')).toContain('Maya Compliance');
    // Each row shows its place in the hash chain.
    expect(await page.textContent('#audit')).toMatch(/incoming #\d+ [0-9a-f]{12}…/);
    await shot(page, 'audit-log-with-the-decision');
    await page.close();
  });

  it('a stale page and a transfer decided elsewhere get a clear message, and nothing is decided twice', async () => {
    const id = await sanctioned();
    const page = await browser.newPage();
    await signIn(page, 'Rita Reviewer', 'compliance');
    await page.goto(`${orch.apiUrl}/console#/transfer/incoming-${id}`);
    await page.waitForSelector('#decision-form');
    // Another reviewer decides while this page is open.
    expect(
      (
        await api(
          'POST',
          `/v1/transfers/${id}/decision`,
          { decision: 'approve', reason: 'known customer' },
          await keyOf('Other Reviewer', 'compliance'),
        )
      ).status,
    ).toBe(200);
    await page.check('input[value=decline]');
    await page.fill('#reason', 'decline from a stale page');
    await page.click('#decide');
    await page.waitForSelector('#transfer-problem .message.error');
    expect(await page.textContent('#transfer-problem .message.error')).toContain('out of date');
    // The page now shows the transfer as it is: decided by the other reviewer, nothing left to decide.
    await page.waitForSelector('#decision');
    expect(await page.textContent('#decision')).toContain('Other Reviewer');
    expect(await page.locator('#decide').count()).toBe(0);
    await shot(page, 'stale-page-refused');
    const view = await eventually(async () => {
      const v = (await api('GET', `/v1/transfers/list/incoming-${id}`)).body;
      return v.final ? v : undefined;
    }, 30_000);
    expect(view).toMatchObject({
      status: 'ACCEPTED',
      decision: {
        actor: expect.stringMatching(/^apikey:[0-9a-f-]{36}$/),
        principal: { name: 'Other Reviewer' },
        decision: 'approve',
      },
    });
    // The API itself refuses a second decision.
    const again = await api(
      'POST',
      `/v1/transfers/${id}/decision`,
      { decision: 'decline', reason: 'again' },
      await keyOf('Rita Reviewer', 'compliance'),
    );
    expect(again.status).toBe(409);
    await page.close();
  });

  it('a viewer reads the held transfer but gets no decide button', async () => {
    const id = await sanctioned();
    const page = await browser.newPage();
    await signIn(page, 'Victor Viewer', 'viewer');
    await page.goto(`${orch.apiUrl}/console#/transfer/incoming-${id}`);
    await page.waitForSelector('#no-decide');
    // Which rule decided: none approves a sanctions hit, so the policy's approval was overridden.
    expect(await page.textContent('#policy-decision')).toContain('SEND_TO_INBOX');
    expect(await page.textContent('#policy-decision')).toContain('sanctions-hit');
    // The hits are compliance matters: the viewer sees that the transfer waits for review, not what matched.
    expect(await page.textContent('#hits')).toBe('shown to the compliance role only');
    expect(await page.locator('#decide').count()).toBe(0);
    expect(await page.locator('#show-pii').count()).toBe(0);
    await shot(page, 'viewer-without-decide-button');
    await page.close();
  });

  it('the queue shows a new transfer that needs review without a reload', async () => {
    const page = await browser.newPage();
    await signIn(page, 'Rita Reviewer', 'compliance');
    await page.click('nav a[href="#/queue"]');
    await page.waitForSelector('#queue, #queue-empty');
    // A mark on the document: a reload would drop it.
    await page.evaluate('window.__sameDocument = true');
    const id = await sanctioned();
    await page.locator(`#queue tr[data-id="${id}"]`).waitFor({ timeout: 30_000 });
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await shot(page, 'queue-refreshed-with-a-new-transfer');
    await page.close();
  });

  it('the counterparties page lists a review made through the API, and saves one from its form', async () => {
    const byApi = randomDid();
    const put = await api('PUT', `/v1/counterparties/${encodeURIComponent(byApi)}`, {
      reviewValue: 'BLOCKED',
      note: 'reviewed through the API',
      dueAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      jurisdiction: 'DE',
    });
    expect(put.status).toBe(200);
    const page = await browser.newPage();
    await signIn(page, 'Rita Reviewer', 'compliance');
    await page.goto(`${orch.apiUrl}/console#/counterparties`);
    const listed = page.locator(`#counterparties tr[data-vasp="${byApi}"]`);
    await listed.waitFor();
    expect(await listed.textContent()).toContain('BLOCKED');
    expect(await listed.textContent()).toContain('reviewed through the API');

    const byPage = randomDid();
    await page.fill('#review-form input[name=vaspDid]', byPage);
    await page.selectOption('#review-form select[name=reviewValue]', 'TRUSTED');
    await page.selectOption('#review-form select[name=subsidiaryDid]', g.subA);
    await page.fill('#review-form textarea[name=note]', 'reviewed on the page');
    await page.click('#review-form button[type=submit]');
    await page.locator(`#counterparties tr[data-vasp="${byPage}"]`).waitFor();
    // VASPs by their directory names, the DID on hover; in the form's options too.
    const scope = page.locator(`#counterparties tr[data-vasp="${byPage}"] .vasp[data-did="${g.subA}"]`);
    await scope.filter({ hasText: 'Subsidiary A' }).waitFor();
    expect(await scope.getAttribute('title')).toBe(g.subA);
    await page
      .locator(`#review-form select[name=subsidiaryDid] option[value="${g.subA}"]`, { hasText: 'Subsidiary A' })
      .waitFor({ state: 'attached' });
    const saved = await api('GET', `/v1/counterparties/${encodeURIComponent(byPage)}`);
    expect(saved.body.overrides).toMatchObject([
      { subsidiaryDid: g.subA, reviewValue: 'TRUSTED', note: 'reviewed on the page' },
    ]);
    expect(saved.body.overrides[0].reviewedBy).toMatch(/^apikey:/);
    await shot(page, 'counterparties-saved-from-the-page');
    await page.close();
  });

  it('an outgoing transfer the policy held shows the rule, and a compliance officer releases it from its page', async () => {
    const policy = await api('PUT', `/v1/policies/${encodeURIComponent(g.subA)}`, {
      currency: 'USD',
      incoming: [{ order: 1, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' }],
      outgoing: [{ order: 1, actionRule: 'SEND_TO_INBOX', ruleCheck: 'ASSET', ruleValue: 'ETH' }],
      note: 'hold outgoing ETH for a person',
    });
    expect(policy.status).toBe(200);
    const ivms = JSON.parse(readFileSync(resolve(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'));
    const id = randomUUID();
    const sent = await fetch(`${orch.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch.headers('operator', { 'content-type': 'application/json', 'idempotency-key': id }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '1000000000000000000',
        originatorVASPdid: g.subA,
        beneficiaryVASPdid: g.external,
        transactionBlockchainInfo: { destination: evm() },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
      }),
    });
    expect(sent.status).toBe(202);
    await eventually(async () => ((await api('GET', `/v1/transfers/${id}`)).body.status === 'HELD' ? true : undefined));
    const page = await browser.newPage();
    await signIn(page, 'Rita Reviewer', 'compliance');
    await page.goto(`${orch.apiUrl}/console#/transfer/outgoing-${id}`);
    await page.waitForSelector('#release-form');
    expect(await page.textContent('#policy-decision')).toContain('ASSET ETH');
    expect(await page.textContent('#broadcast-event')).toContain('Not decided yet');
    await shot(page, 'outgoing-held-by-policy');
    await page.fill('#release-reason', 'known customer, checked by hand');
    await page.click('#release');
    const released = await eventually(async () => {
      const s = (await api('GET', `/v1/transfers/${id}`)).body;
      return s.transactionId ? s : undefined;
    }, 30_000);
    expect(released.review).toMatchObject({ decision: 'release', reason: 'known customer, checked by hand' });
    // Broadcast by the custody system: the page shows the hash it then gave (PATCH /v1/transfers/:id).
    expect(await page.textContent('#tx-hash')).toBe('—');
    const txHash = `0x${'ab'.repeat(32)}`;
    expect((await api('PATCH', `/v1/transfers/${id}`, { txHash }, orch.apiKeys.operator)).status).toBe(200);
    await page.reload();
    await page.waitForSelector('#tx-hash');
    expect(await page.textContent('#tx-hash')).toBe(txHash);
    // Accepted by the counterparty: under the default rule (on-accepted) the page shows the transfer.release.
    await eventually(async () => ((await api('GET', `/v1/transfers/${id}`)).body.broadcast ? true : undefined), 30_000);
    await page.reload();
    await page.waitForSelector('#broadcast-rule');
    expect(await page.textContent('#broadcast-event')).toContain('Funds may be broadcast');
    expect(await page.textContent('#broadcast-rule')).toBe('on-accepted');
    expect(await page.textContent('#broadcast-reason')).toBe('the beneficiary VASP accepted the transfer');
    expect(await page.textContent('#broadcast-at')).not.toBe('—');
    await shot(page, 'outgoing-released-for-broadcast');
    await page.close();
  });

  it('the new-transfer page classifies the transfer as the operator types: type, missing fields, thresholds, price', async () => {
    const validations: string[] = [];
    const page = await browser.newPage();
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/transfers/validate')) validations.push(r.postData() ?? '');
    });
    await signIn(page, 'Olga Operator', 'operator');
    await page.goto(`${orch.apiUrl}/console#/new-transfer`);
    await page.waitForSelector('#new-transfer-form');
    expect(await page.textContent('#classification-pending')).toContain('transactionAmount');
    await page.selectOption('#nt-originatorVASPdid', g.subA);
    await page.fill('#nt-beneficiaryVASPdid', g.external);
    await page.fill('#nt-destination', evm());
    // Typed key by key, as a person would: the page asks once the typing rests, with the form's values.
    await page.type('#nt-transactionAmount', '2000000000000000000');
    await page.locator('#classification-type[data-type="TRAVELRULE"]').waitFor();
    expect(validations.length).toBeGreaterThan(0);
    expect(JSON.parse(validations.at(-1)!)).toMatchObject({
      originatorVASPdid: g.subA,
      transactionAsset: 'ETH',
      transactionAmount: '2000000000000000000',
    });
    // 2 ETH at the embedded 3,000 USD: above FATF's 1,000 USD (the subsidiary has no jurisdiction configured).
    const own = page.locator('#classification-thresholds tr[data-side="own"]');
    expect(await own.locator('.jurisdiction').textContent()).toBe('FATF');
    expect(await own.locator('.amount').textContent()).toContain('6,000');
    expect(await own.locator('.threshold').textContent()).toContain('1,000 USD');
    expect(await own.locator('.source').textContent()).toBeTruthy();
    expect(await page.locator('#classification-thresholds tr[data-side="counterparty"] .confidence').count()).toBe(1);
    expect(await page.textContent('#classification-price')).toContain('USD');
    expect(await page.textContent('#classification-errors')).toContain(
      'originator.originatorPersons[0].naturalPerson.name',
    );
    await shot(page, 'new-transfer-classified');

    // The originator's name typed in: the next answer no longer asks for it.
    await page.fill('#nt-originatorLastName', 'Lovelace');
    await page.fill('#nt-originatorFirstName', 'Ada');
    await page.waitForFunction(
      () =>
        !document
          .querySelector('#classification-errors')
          ?.textContent?.includes('originator.originatorPersons[0].naturalPerson.name'),
    );
    // A small amount: below the threshold.
    await page.fill('#nt-transactionAmount', '1000');
    await page.locator('#classification-type[data-type="BELOW_THRESHOLD"]').waitFor();
    // Sent from the page: the transfer's page shows the classification stored with it.
    await page.fill('#nt-originatorTown', 'London');
    await page.fill('#nt-originatorCountry', 'GB');
    await page.fill('#nt-beneficiaryLastName', 'Hopper');
    await page.fill('#nt-beneficiaryFirstName', 'Grace');
    await page.locator('#classification-type[data-type="BELOW_THRESHOLD"]').waitFor();
    await page.click('#nt-send');
    await page.waitForFunction(
      () => location.hash.startsWith('#/transfer/') || document.querySelector('#new-transfer-form .message'),
    );
    expect(
      await page.evaluate(() => document.querySelector('#new-transfer-form .message')?.textContent ?? null),
    ).toBeNull();
    const workflowId = decodeURIComponent(page.url().split('#/transfer/')[1]!);
    // The list row is written as the workflow starts: reload until the page finds it.
    await eventually(async () => {
      await page.reload();
      // The page shows the facts and the stored details together, or its error.
      await page.waitForSelector('#facts, main .message.error', { timeout: 10_000 }).catch(() => undefined);
      return (await page.locator('#classification').count()) ? true : undefined;
    }, 30_000);
    expect(await page.getAttribute('#classification-type', 'data-type')).toBe('BELOW_THRESHOLD');
    expect(await page.textContent('#classification-thresholds tr[data-side="own"] .jurisdiction')).toBe('FATF');
    expect(await page.textContent('#classification-price')).toContain('USD');
    const stored = (await api('GET', `/v1/transfers/${workflowId.replace(/^outgoing-/, '')}`)).body;
    expect(stored.classification).toMatchObject({ type: 'BELOW_THRESHOLD' });
    await shot(page, 'transfer-stored-classification');

    // An asset the price table does not know: the API's refusal, naming the field, instead of a classification.
    await page.goto(`${orch.apiUrl}/console#/new-transfer`);
    await page.fill('#nt-beneficiaryVASPdid', g.external);
    await page.fill('#nt-destination', evm());
    await page.fill('#nt-transactionAmount', '1000');
    await page.fill('#nt-transactionAsset', 'NOPE');
    await page.locator('#classification-error', { hasText: 'transactionAsset' }).waitFor();
    expect(await page.locator('#classification').count()).toBe(0);
    await shot(page, 'new-transfer-unknown-asset');
    await page.close();
  });

  it('the policies page shows a policy saved through the API, and runs a backtest from the page', async () => {
    // Last: the group's policy changes how later transfers of the group are decided.
    const saved = await api('PUT', `/v1/policies/${encodeURIComponent(g.gateway)}`, {
      currency: 'EUR',
      incoming: [
        { order: 10, actionRule: 'REJECT', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'BLOCKED' },
        { order: 20, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' },
      ],
      outgoing: [{ order: 10, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' }],
      note: 'saved through the API',
    });
    expect(saved.status).toBe(200);
    const page = await browser.newPage();
    await signIn(page, 'Rita Reviewer', 'compliance');
    await page.goto(`${orch.apiUrl}/console#/policies`);
    await page.locator('#policy-history', { hasText: 'saved through the API' }).waitFor();
    expect(await page.locator('#rules-incoming li').count()).toBe(2);
    await page
      .locator(`section[aria-labelledby=policies-title] select option[value="${g.subA}"]`, { hasText: 'Subsidiary A' })
      .waitFor({ state: 'attached' });
    expect(await page.textContent('#policy-active')).toContain(`version ${saved.body.version.version}`);
    await page.click('#run-backtest');
    await page.locator('#backtest', { hasText: '"' }).waitFor({ timeout: 30_000 });
    expect(await page.textContent('#backtest')).toContain('"transfers"');
    expect(await page.textContent('#backtest')).toContain('"changed"');
    await shot(page, 'policies-backtest');
    await page.close();
  });
});
