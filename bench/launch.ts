/**
 * How the benchmarks run the processes they spawn (the sandbox, the workers): from source through tsx, as `npm start`
 * does, or as production does, the compiled build (`npm run build`: dist/, its prebuilt workflow bundle) under
 * `node --enable-source-maps` (Dockerfile). BENCH_BUILD picks: `source` (the default) or `compiled`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

/** How a bench's report names the build it ran. */
export function describeBuild(build: BenchBuild): string {
  return build === 'compiled' ? 'compiled (dist/)' : 'from source (tsx)';
}

/**
 * For `compiled`: throws unless dist/ holds the build of the checked-out sources, that is, its workflow bundle is newer
 * than every TypeScript file the build compiles: the folders tsconfig.build.json includes (client/console, bundled by
 * the build, lies in one of them), less tests. A bench that measured an older build would say nothing of the code.
 */
export function assertBuildCurrent(dir = root): void {
  const bundle = join(dir, 'dist', 'workflow-bundle.js');
  if (!existsSync(bundle)) throw new Error('BENCH_BUILD=compiled: dist/ is missing; run npm run build first');
  const built = statSync(bundle).mtimeMs;
  const { include } = JSON.parse(readFileSync(join(dir, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const stale = include
    .filter((folder) => existsSync(join(dir, folder)))
    .flatMap((folder) =>
      readdirSync(join(dir, folder), { recursive: true, encoding: 'utf8' }).map((f) => join(folder, f)),
    )
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && statSync(join(dir, f)).mtimeMs > built);
  if (stale.length)
    throw new Error(
      `BENCH_BUILD=compiled: dist/ is older than ${stale[0]}${stale.length > 1 ? ` and ${stale.length - 1} more` : ''}; run npm run build`,
    );
}
