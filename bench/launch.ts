/**
 * How the benchmarks run the processes they spawn (the sandbox, the workers): from source through tsx, as `npm start`
 * does, or as production does, the compiled build (`npm run build`: dist/, its prebuilt workflow bundle) under
 * `node --enable-source-maps` (Dockerfile). BENCH_BUILD picks: `source` (the default) or `compiled`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export type BenchBuild = 'source' | 'compiled';

const root = join(__dirname, '..');

export function benchBuild(env = process.env): BenchBuild {
  const raw = env.BENCH_BUILD ?? 'source';
  if (raw !== 'source' && raw !== 'compiled') throw new Error(`BENCH_BUILD: "${raw}" is not source or compiled`);
  return raw;
}

/** The node arguments that run `entry` (a path from the repo's root, e.g. `workers/main.ts`) in this build. */
export function entryArgs(entry: string, build: BenchBuild, dir = root): string[] {
  if (build === 'source') return ['--import', 'tsx', join(dir, entry)];
  return ['--enable-source-maps', join(dir, 'dist', entry.replace(/\.ts$/, '.js'))];
}

/**
 * For `compiled`: throws unless dist/ holds the build of the checked-out sources, that is, its workflow bundle is newer
 * than every TypeScript file the build compiles. A bench that measured an older build would say nothing of the code.
 */
export function assertBuildCurrent(dir = root): void {
  const bundle = join(dir, 'dist', 'workflow-bundle.js');
  if (!existsSync(bundle)) throw new Error('BENCH_BUILD=compiled: dist/ is missing; run npm run build first');
  const built = statSync(bundle).mtimeMs;
  const skip = new Set(['node_modules', 'dist', 'test', 'bench', '.data', '.git', 'coverage', 'test-artifacts']);
  const stale: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (!skip.has(e.name) && !e.name.startsWith('.')) walk(join(d, e.name));
      } else if (e.name.endsWith('.ts') && statSync(join(d, e.name)).mtimeMs > built) stale.push(join(d, e.name));
    }
  };
  walk(dir);
  if (stale.length)
    throw new Error(
      `BENCH_BUILD=compiled: dist/ is older than ${relative(dir, stale[0]!)}${stale.length > 1 ? ` and ${stale.length - 1} more` : ''}; run npm run build`,
    );
}
