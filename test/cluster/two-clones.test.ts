import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { databaseExists, dropDatabase, LOCAL_SERVER_URL } from '../../db/database-url';
import type { InstallationNames } from '../../scripts/installation';

jest.setTimeout(900_000);

const ROOT = resolve(__dirname, '../..');

/** Binds `port` on loopback and releases it: true when nothing listens there. */
const bindable = (port: number) =>
  new Promise<boolean>((ok) => {
    const s = createServer();
    s.once('error', () => ok(false));
    s.listen(port, '127.0.0.1', () => s.close(() => ok(true)));
  });

/** A free ephemeral port (32768 and up on Linux: never inside a range `freeRange` picks). */
const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });

/** A base port whose next 24 are free: the Temporal server's services sit at offsets up to +23 of its frontend. */
async function freeRange(taken: number[]): Promise<number> {
  for (;;) {
    // Membership ports must stay under 32768 (the server stores them as a smallint).
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.some((t) => Math.abs(t - base) < 24)) continue;
    const ports = Array.from({ length: 24 }, (_, i) => base + i);
    if ((await Promise.all(ports.map(bindable))).every(Boolean)) return base;
  }
}

/** Settings that would point a clone at another installation's databases, server or data: a user's shell has none. */
const INHERITED =
  /^(NODE_ENV|JEST_WORKER_ID|DATABASE_URL|SANDBOX_DATABASE_URL|DATA_DIR|PORT|SANDBOX_PORT|HOST|START_TEMPORAL|WORKER_PROCESSES|TEMPORAL_(?!CLI_).*|TEST_.*)$/;

interface Clone {
  name: string;
  dir: string;
  env: Record<string, string>;
  api: string;
  temporal: string;
  child?: ChildProcess;
  output: string;
}

/**
 * A clone of the working tree as it is (tracked and new files), with this checkout's node_modules linked in and the
 * files' times kept, so that npm start finds its dependencies installed, as in a clone after `npm install`.
 */
async function makeClone(name: string, taken: number[]): Promise<Clone> {
  const dir = mkdtempSync(join(tmpdir(), `tro-clone-${name}-`));
  const files = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).stdout.split('\0');
  for (const file of files.filter((f) => f && f !== 'node_modules' && existsSync(join(ROOT, f)))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file), { preserveTimestamps: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const temporal = await freeRange(taken);
  const [api, sandbox, ui] = [await freePort(), await freePort(), await freePort()];
  taken.push(temporal);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !INHERITED.test(k)),
  ) as Record<string, string>;
  // What the README tells a second clone to set: its own ports; databases and data are its own without settings.
  Object.assign(env, {
    PORT: String(api),
    SANDBOX_PORT: String(sandbox),
    TEMPORAL_ADDRESS: `127.0.0.1:${temporal}`,
    TEMPORAL_UI_PORT: String(ui),
    LOG_LEVEL: 'warn',
    WORKER_PROCESSES: '1',
    // /metrics listeners: the defaults (9464-9466) are one per machine, so a second clone takes free ports.
    METRICS_PORT: '0',
    WORKER_METRICS_PORT: '0',
    TEMPORAL_SDK_METRICS_PORT: 'off',
  });
  return { name, dir, env, api: `http://127.0.0.1:${api}`, temporal: `127.0.0.1:${temporal}`, output: '' };
}

/** `npm start` (or `npm run start:cluster`) in the clone, as package.json runs it. */
function start(clone: Clone, mode: 'dev' | 'cluster'): void {
  clone.output = '';
  const args = [join(clone.dir, 'scripts/bootstrap.cjs'), 'start', ...(mode === 'cluster' ? ['--cluster'] : [])];
  const child = spawn(process.execPath, args, {
    cwd: clone.dir,
    env: { ...clone.env, ...(mode === 'dev' ? { START_TEMPORAL: '1' } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (clone.output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (clone.output += d.toString()));
  clone.child = child;
}

/** Until the clone has printed its demo transfers (the last thing npm start prints). */
async function started(clone: Clone, timeoutMs = 720_000): Promise<void> {
  const since = Date.now();
  while (!/counterparty stays silent\s+\S+\s+\S+/.test(clone.output)) {
    if (clone.child!.exitCode !== null)
      throw new Error(`${clone.name}: npm start exited with ${clone.child!.exitCode}:\n${clone.output}`);
    if (Date.now() - since > timeoutMs)
      throw new Error(
        `${clone.name}: npm start did not finish its demo in ${timeoutMs / 60_000} minutes:\n${clone.output}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Ctrl-C, as a user stops it; resolves with the exit code. */
async function stop(clone: Clone): Promise<number | null> {
  const child = clone.child;
  if (!child || child.exitCode !== null) return child?.exitCode ?? null;
  child.kill('SIGINT');
  await new Promise<void>((r) => {
    const timer = setTimeout(r, 90_000);
    child.once('exit', () => {
      clearTimeout(timer);
      r();
    });
  });
  return child.exitCode;
}

const installation = (clone: Clone, dataDir: string) =>
  JSON.parse(readFileSync(join(clone.dir, dataDir, 'installation.json'), 'utf8')) as InstallationNames;
const token = (clone: Clone, dataDir: string, role: string) =>
  (
    JSON.parse(readFileSync(join(clone.dir, dataDir, 'demo.json'), 'utf8')) as {
      operators: Record<string, { token: string }>;
    }
  ).operators[role]!.token;

/** The workflow ids of the demo transfers the clone printed. */
const printedIds = (clone: Clone) => [...clone.output.matchAll(/\s((?:incoming|outgoing)-\S+)\s/g)].map((m) => m[1]!);

/** Every transfer the clone's API lists (the console's lists, the review queue among them). */
async function listed(clone: Clone, dataDir: string): Promise<string[]> {
  const r = await fetch(`${clone.api}/v1/transfers?limit=200`, {
    headers: { authorization: `Bearer ${token(clone, dataDir, 'viewer')}` },
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { workflowId: string }[] }).data.map((t) => t.workflowId);
}

/** Which of `ids` the Temporal server at `address` holds in the namespace npm start uses. */
async function heldBy(address: string, ids: string[]): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const held = await Promise.all(
      ids.map((id) =>
        client.workflow
          .getHandle(id)
          .describe()
          .then(
            () => id,
            (e: unknown) => {
              if (e instanceof WorkflowNotFoundError) return undefined;
              throw e;
            },
          ),
      ),
    );
    return held.filter((id): id is string => id !== undefined);
  } finally {
    await connection.close();
  }
}

/** A connectivity check through the API, run to its end: the API, Temporal and a worker of the clone all work. */
async function checkRuns(clone: Clone, dataDir: string): Promise<void> {
  const as = (role: string) => ({ authorization: `Bearer ${token(clone, dataDir, role)}` });
  const r = await fetch(`${clone.api}/v1/checks/connectivity`, { method: 'POST', headers: as('operator') });
  expect(r.status).toBeLessThan(300);
  const { workflowId } = (await r.json()) as { workflowId: string };
  const deadline = Date.now() + 120_000;
  for (;;) {
    const s = (await (
      await fetch(`${clone.api}/v1/checks/connectivity/${workflowId}`, { headers: as('viewer') })
    ).json()) as { status: string };
    if (s.status === 'COMPLETED') return;
    if (Date.now() > deadline || s.status === 'FAILED' || s.status === 'TERMINATED')
      throw new Error(`${clone.name}: connectivity check ${s.status}`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

/**
 * Two clones of the project on one machine and one PostgreSQL, as two developers (or one, trying both modes) run
 * them: each `npm start` / `npm run start:cluster` keeps its databases, Temporal and data apart from the other's, with
 * nothing set but the ports. Each sees only its own transfers; stopping one leaves the other working; and a clone
 * switching modes, where another clone ran the cluster before, starts clean rather than inheriting anything.
 */
describe('npm start and npm run start:cluster from two clones on one PostgreSQL', () => {
  const taken: number[] = [];
  let a: Clone;
  let b: Clone;
  const idsOf = { aCluster: [] as string[], bDev: [] as string[] };

  beforeAll(async () => {
    a = await makeClone('a', taken);
    b = await makeClone('b', taken);
  });

  afterAll(async () => {
    for (const clone of [a, b]) {
      if (!clone) continue;
      await stop(clone);
      for (const dataDir of ['.data', '.data/cluster']) {
        if (!existsSync(join(clone.dir, dataDir, 'installation.json'))) continue;
        const names = installation(clone, dataDir);
        for (const db of [
          names.database,
          `${names.database}_sandbox`,
          names.temporalDatabase,
          `${names.temporalDatabase}_visibility`,
        ]) {
          await dropDatabase(LOCAL_SERVER_URL, db).catch(() => undefined);
        }
      }
      rmSync(clone.dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('A runs start:cluster while B runs npm start: both come up, each with its own databases, Temporal and transfers', async () => {
    start(a, 'cluster');
    start(b, 'dev');
    await Promise.all([started(a), started(b)]);
    idsOf.aCluster = printedIds(a);
    idsOf.bDev = printedIds(b);
    expect(idsOf.aCluster.length).toBeGreaterThanOrEqual(11);
    expect(idsOf.bDev.length).toBeGreaterThanOrEqual(11);

    const namesA = installation(a, '.data/cluster');
    const namesB = installation(b, '.data');
    expect(new Set([namesA.database, namesA.temporalDatabase, namesB.database, namesB.temporalDatabase]).size).toBe(4);
    expect(await databaseExists(LOCAL_SERVER_URL, namesA.temporalDatabase)).toBe(true);
    expect(await databaseExists(LOCAL_SERVER_URL, namesB.database)).toBe(true);

    const [listA, listB] = [await listed(a, '.data/cluster'), await listed(b, '.data')];
    expect(listA).toEqual(expect.arrayContaining(idsOf.aCluster));
    expect(listB).toEqual(expect.arrayContaining(idsOf.bDev));
    expect(listA.filter((id) => listB.includes(id))).toEqual([]);
    expect(await heldBy(a.temporal, [...idsOf.aCluster, ...idsOf.bDev])).toEqual(idsOf.aCluster);
    expect(await heldBy(b.temporal, [...idsOf.aCluster, ...idsOf.bDev])).toEqual(idsOf.bDev);
  });

  it("a second start on a running clone's ports stops at once, naming the setting, before it builds or creates anything", async () => {
    const again: Clone = { ...a, name: 'a again', output: '', child: undefined };
    start(again, 'cluster');
    const code = await new Promise<number | null>((r) => again.child!.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(again.output).toMatch(/configuration error: PORT: port \d+ is already in use/);
    expect(again.output).not.toMatch(/Building|Postgres:/);
    expect((await fetch(`${a.api}/healthz`)).status).toBe(200);
  });

  it('stopping A leaves B working', async () => {
    expect(await stop(a)).toBe(0);
    expect((await fetch(`${b.api}/healthz`)).status).toBe(200);
    await checkRuns(b, '.data');
  });

  it("B switches to start:cluster after A ran it: its own cluster, none of A's transfers nor its own npm start's", async () => {
    expect(await stop(b)).toBe(0);
    start(b, 'cluster');
    await started(b);
    const ids = printedIds(b);
    const names = installation(b, '.data/cluster');
    expect(names.temporalDatabase).not.toBe(installation(a, '.data/cluster').temporalDatabase);
    // A's cluster is kept for A's next start.
    expect(await databaseExists(LOCAL_SERVER_URL, installation(a, '.data/cluster').temporalDatabase)).toBe(true);
    const list = await listed(b, '.data/cluster');
    expect(list).toEqual(expect.arrayContaining(ids));
    expect(list.filter((id) => idsOf.aCluster.includes(id) || idsOf.bDev.includes(id))).toEqual([]);
    await checkRuns(b, '.data/cluster');
  });
});
