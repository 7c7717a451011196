import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_PATH } from '../../scripts/chromium';
import { dropDatabase, LOCAL_SERVER_URL } from '../../db/database-url';

const ROOT = resolve(__dirname, '../..');
const ARTIFACTS = resolve(ROOT, 'test-artifacts/npm-start');

/** Free TCP ports on loopback, held together while chosen so none repeats. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((ok) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => ok(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

/**
 * What a newcomer does after `npm start` (issues 10 and 13, "Done when"): the README's curl calls with the printed
 * development credentials, then the printed console URL and the compliance officer's sign-in at the identity
 * provider, the sanctioned demo transfer in the queue, declined from the page. scripts/start.ts runs as npm start
 * runs it, in a data directory and on ports of its own, against a database of its own.
 */
describe('npm start: the printed credentials and console work end to end', () => {
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let browser: BrowserContext | undefined;
  const database = `tro_npm_start_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = mkdtempSync(join(tmpdir(), 'tro-npm-start-'));
    const [api, sandbox, temporal, ui] = await freePorts(4);
    child = spawn(
      process.execPath,
      [resolve(ROOT, 'node_modules/tsx/dist/cli.mjs'), resolve(ROOT, 'scripts/start.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: String(api),
          SANDBOX_PORT: String(sandbox),
          TEMPORAL_ADDRESS: `127.0.0.1:${temporal}`,
          START_TEMPORAL: '1',
          TEMPORAL_UI_PORT: String(ui),
          DATA_DIR: dataDir,
          DATABASE_URL: `${LOCAL_SERVER_URL}/${database}`,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const started = Date.now();
    while (
      !/Demo incoming transfers/.test(output) ||
      !/held for review/.test(output) ||
      !/counterparty stays silent\s+\S+\s+\S+/.test(output)
    ) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
      if (Date.now() - started > 420_000) throw new Error(`npm start did not finish its demo in 7 minutes:\n${output}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 480_000);

  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await new Promise((r) => {
        child.once('exit', r);
        setTimeout(r, 60_000);
      });
    }
    await dropDatabase(LOCAL_SERVER_URL, database).catch(() => undefined);
    await dropDatabase(LOCAL_SERVER_URL, `${database}_sandbox`).catch(() => undefined);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  const printed = (pattern: RegExp) => {
    const m = pattern.exec(output);
    if (!m) throw new Error(`npm start did not print ${pattern}:\n${output}`);
    return m;
  };

  it("the README's calls work with the credentials in .data/demo.json; nothing answers without one", async () => {
    const apiUrl = printed(/Internal API\s+(\S+)/)[1]!;
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      operators: Record<string, { token: string; name: string }>;
    };
    const held = printed(/incoming-(\S+)\s+held for review/)[1]!;
    const get = (path: string, token?: string) =>
      fetch(`${apiUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    expect((await get(`/v1/incoming-transfers/${held}`)).status).toBe(401);
    const status = await get(`/v1/incoming-transfers/${held}`, demo.operators.viewer!.token);
    expect(status.status).toBe(200);
    const waiting = (await status.json()) as { phase: string; policy?: { action: string; override?: string } };
    expect(waiting.phase).toBe('awaiting-review');
    // The demo policy approves the trusted counterparty; no rule approves a sanctions hit.
    expect(waiting.policy).toMatchObject({ action: 'SEND_TO_INBOX', override: 'sanctions-hit' });
    const me = (await (await get('/v1/me', demo.operators.compliance!.token)).json()) as {
      name: string;
      roles: string[];
    };
    expect(me).toMatchObject({ name: demo.operators.compliance!.name, roles: ['compliance'] });
    // A viewer may not decide.
    const refused = await fetch(`${apiUrl}/v1/transfers/${held}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.operators.viewer!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'decline', reason: 'not mine to decide' }),
    });
    expect(refused.status).toBe(403);
  });

  it('demonstrates both directions: one outgoing transfer per counterparty behaviour, printed with the status the API reports', async () => {
    const apiUrl = printed(/Internal API\s+(\S+)/)[1]!;
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      operators: Record<string, { token: string }>;
    };
    const expected: [string, string, boolean][] = [
      ['accepts', 'ACCEPTED', true],
      ['declines', 'DECLINED', true],
      ['rejects \\(not its address\\)', 'REJECTED', true],
      ['accepts 20 s later', 'ACCEPTED', true],
      ['confirms the address only', 'ACK', false],
      ['is not ready', 'NOT_READY', false],
      ['stays silent', 'SENT', false],
    ];
    for (const [label, status, final] of expected) {
      const [, workflowId, shown] = printed(new RegExp(`counterparty ${label}\\s+(outgoing-\\S+)\\s+([A-Z_]+)`));
      expect(shown).toBe(status);
      const r = await fetch(`${apiUrl}/v1/transfers/${workflowId!.replace(/^outgoing-/, '')}`, {
        headers: { authorization: `Bearer ${demo.operators.viewer!.token}` },
      });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({
        workflowId,
        status,
        final,
        beneficiaryVaspDid: expect.stringMatching(/^did:/),
      });
    }
  });

  it('the compliance officer signs in at the printed console with the printed email and password and declines the sanctioned transfer', async () => {
    const consoleUrl = printed(/Console\s+(\S+\/console)/)[1]!;
    const [, email, password] = printed(/^\s+compliance\s+(\S+@\S+)\s+(\S+)$/m);
    const held = printed(/incoming-(\S+)\s+held for review/)[1]!;
    const profile = mkdtempSync(join(tmpdir(), 'tro-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      viewport: { width: 1400, height: 900 },
    });
    const page = await browser.newPage();
    await page.goto(consoleUrl);
    await page.click('#provider-sign-in');
    await page.fill('#username', email!);
    await page.fill('#password', password!);
    await page.click('#sign-in');
    await page.waitForSelector('#who');
    expect(await page.textContent('#role')).toBe('compliance');
    // The first page is the KPI dashboard; the queue is one link away.
    await page.click('nav a[href="#/queue"]');
    const row = page.locator(`#queue tr[data-id="${held}"]`);
    await row.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, '01-queue.png'), fullPage: true });
    await row.locator('a').click();
    await page.waitForSelector('#decision-form');
    await page.check('input[value=decline]');
    await page.fill('#reason', 'confirmed match with the SDN entry');
    await page.click('#decide');
    await page.locator('#status', { hasText: 'DECLINED' }).waitFor({ timeout: 60_000 });
    const name = (await page.textContent('#who'))!
      .replace(/^Signed in as\s*/, '')
      .split('·')[0]!
      .trim();
    expect(await page.textContent('#decision')).toContain(`Declined by ${name}`);
    await page.screenshot({ path: join(ARTIFACTS, '02-declined.png'), fullPage: true });

    // The decision is in the audit chain under that person, and the chain verifies (the command in docs/audit.md).
    const apiUrl = printed(/Internal API\s+(\S+)/)[1]!;
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
      operators: Record<string, { token: string }>;
    };
    const audit = (await (
      await fetch(`${apiUrl}/v1/audit-log?subject=${held}`, {
        headers: { authorization: `Bearer ${demo.operators.compliance!.token}` },
      })
    ).json()) as { data: { action: string; actor: string; actorName?: string }[] };
    // The actor is the identity provider's stable subject; the name is for display.
    expect(audit.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'incoming.decline',
          actor: expect.stringMatching(/^oidc:aurora-compliance-/),
          actorName: name,
        }),
      ]),
    );
    // The same data directory as npm start's: its development key signs the audit checkpoints the command checks.
    const verify = spawnSync(
      process.execPath,
      [resolve(ROOT, 'node_modules/tsx/dist/cli.mjs'), resolve(ROOT, 'client/cli/main.ts'), 'audit', 'verify'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: `${LOCAL_SERVER_URL}/${database}`, DATA_DIR: dataDir },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect({ status: verify.status, out: verify.stdout + verify.stderr }).toEqual({
      status: 0,
      out: expect.stringContaining('audit chain intact'),
    });
  });
});
