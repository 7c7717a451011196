import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testEnv } from '../harness/platform';

const root = resolve(__dirname, '../..');

/** Runs a process entry point the way npm start does, and returns its exit code and stderr. */
function run(entry: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve(root, 'node_modules/tsx/dist/cli.mjs'), resolve(root, entry)], {
      cwd: root,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        // /metrics on free ports: other processes of the run (and of this machine) hold the defaults.
        METRICS_PORT: '0',
        WORKER_METRICS_PORT: '0',
        TEMPORAL_SDK_METRICS_PORT: 'off',
        LOG_LEVEL: 'silent',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'tro-')),
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

/** One line, naming the setting, no stack trace. */
function expectOneClearLine(stderr: string, pattern: RegExp) {
  const lines = stderr.split('\n').filter((l) => l.trim() && !/ExperimentalWarning|--trace-warnings/.test(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('bad configuration stops start-up with one clear line', () => {
  const network = {
    CLIENT_ID: 'x'.repeat(8),
    CLIENT_SECRET: 'y'.repeat(16),
    AUTH_URL: 'http://127.0.0.1:9',
    BASE_URL: 'http://127.0.0.1:9',
  };
  const good = () => ({
    DATABASE_URL: testEnv().databaseUrl,
    TEMPORAL_ADDRESS: testEnv().temporalAddress,
    TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS!,
  });

  it('an unreachable database', async () => {
    const r = await run('client/main.ts', { ...good(), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: DATABASE_URL: no PostgreSQL answers at 127\.0\.0\.1:1\/nowhere\. Start the server or correct DATABASE_URL/,
    );
  });

  it('an unreachable Temporal server', async () => {
    const r = await run('workers/main.ts', { ...good(), ...network, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^worker: configuration error: TEMPORAL_ADDRESS: no Temporal server answers at 127\.0\.0\.1:1 .*set TEMPORAL_ADDRESS/,
    );
  });

  it('a malformed seed file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tro-seed-'));
    const seed = join(dir, 'seed.json');
    writeFileSync(seed, JSON.stringify({ vasps: [{ did: 'not-a-did', name: 'X' }], users: [] }));
    const r = await run('sandbox/main.ts', { ...good(), SANDBOX_SEED: seed });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^sandbox: configuration error: SANDBOX_SEED: .*seed\.json: vasps\[0\]\.did: .*Fix the seed file/,
    );

    writeFileSync(seed, '{"vasps": [');
    const broken = await run('sandbox/main.ts', { ...good(), SANDBOX_SEED: seed });
    expectOneClearLine(broken.stderr, /^sandbox: configuration error: SANDBOX_SEED: .*is not readable JSON/);
  });

  it('a wrong codec key', async () => {
    const r = await run('client/main.ts', {
      ...good(),
      TEMPORAL_CODEC_KEYS: `k1:${Buffer.alloc(16).toString('base64')}`,
    });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: TEMPORAL_CODEC_KEYS: key "k1" is 16 bytes, not 32\. Set TEMPORAL_CODEC_KEYS/,
    );
  });

  it('an API on an address other than loopback without TLS files, naming both variables', async () => {
    const r = await run('client/main.ts', { ...good(), HOST: '0.0.0.0' });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: TLS_CERT_FILE: and TLS_KEY_FILE are unset while the API listens on 0\.0\.0\.0, which is not a loopback address\. Set TLS_CERT_FILE and TLS_KEY_FILE/,
    );
  });

  it('an API behind a TLS-terminating proxy that names no trusted proxy, naming both variables', async () => {
    const r = await run('client/main.ts', { ...good(), HOST: '0.0.0.0', TLS_TERMINATED_BY_PROXY: '1' });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: TLS_TERMINATED_BY_PROXY: is set without TRUST_PROXY\. Set TRUST_PROXY to the addresses or CIDRs of the proxy that terminates TLS/,
    );
  });

  it('an agent listener off loopback without TLS files, even with AGENT_ALLOW_REMOTE=1 (issue 25)', async () => {
    const r = await run('client/main.ts', {
      ...good(),
      AGENT_PORT: '38123',
      AGENT_HOST: '0.0.0.0',
      AGENT_ALLOW_REMOTE: '1',
    });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: AGENT_HOST: "0\.0\.0\.0" is not a loopback address, and TLS_CERT_FILE and TLS_KEY_FILE are unset: the agent endpoints would answer in clear\. Set TLS_CERT_FILE and TLS_KEY_FILE/,
    );
  });

  it('an API off loopback without its keys, naming the variable, and no development key made up for it (issue 25, item 7f)', async () => {
    const offLoopback = { HOST: '0.0.0.0', TLS_TERMINATED_BY_PROXY: '1', TRUST_PROXY: '127.0.0.1' };
    const { TEMPORAL_CODEC_KEYS: codecKeys, ...withoutCodecKeys } = good();
    const dataDir = mkdtempSync(join(tmpdir(), 'tro-keys-'));
    const r = await run('client/main.ts', { ...withoutCodecKeys, ...offLoopback, DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^api: configuration error: TEMPORAL_CODEC_KEYS: is unset while the API listens on 0\.0\.0\.0, which is not a loopback address \(so are KEYSTORE_MASTER_KEY and AUDIT_CHECKPOINT_KEYS\): a development key would be created in the data directory\. Set TEMPORAL_CODEC_KEYS/,
    );
    expect(readdirSync(dataDir)).toEqual([]);

    const some = await run('client/main.ts', {
      ...withoutCodecKeys,
      ...offLoopback,
      TEMPORAL_CODEC_KEYS: codecKeys!,
      KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
    });
    expect(some.code).toBe(1);
    expectOneClearLine(
      some.stderr,
      /^api: configuration error: AUDIT_CHECKPOINT_KEYS: is unset while the API listens on 0\.0\.0\.0/,
    );
  });

  it('plain http to a network that is not on this machine', async () => {
    const r = await run('workers/main.ts', { ...good(), ...network, AUTH_URL: 'http://auth.network.example' });
    expect(r.code).toBe(1);
    expectOneClearLine(
      r.stderr,
      /^worker: configuration error: AUTH_URL: "http:\/\/auth\.network\.example" is plain http to a host that is not on loopback\. Use https:\/\//,
    );
  });

  it('half-configured network credentials', async () => {
    const r = await run('workers/main.ts', { ...good(), CLIENT_ID: 'abcdefgh' });
    expect(r.code).toBe(1);
    expectOneClearLine(r.stderr, /^worker: configuration error: CLIENT_SECRET: is unset while CLIENT_ID is set/);
  });
});
