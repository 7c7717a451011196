import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuildCurrent, benchBuild, entryArgs } from '../../../bench/launch';

describe('bench/launch: the processes a bench spawns, from source or compiled', () => {
  it('runs an entry through tsx from source, and its compiled file with source maps from dist/', () => {
    expect(entryArgs('workers/main.ts', 'source', '/repo')).toEqual(['--import', 'tsx', '/repo/workers/main.ts']);
    expect(entryArgs('workers/main.ts', 'compiled', '/repo')).toEqual([
      '--enable-source-maps',
      '/repo/dist/workers/main.js',
    ]);
  });

  it('reads BENCH_BUILD, source by default, and names the setting on anything else', () => {
    expect(benchBuild({})).toBe('source');
    expect(benchBuild({ BENCH_BUILD: 'compiled' })).toBe('compiled');
    expect(() => benchBuild({ BENCH_BUILD: 'dist' })).toThrow(/BENCH_BUILD: "dist" is not source or compiled/);
  });

  describe('a compiled run measures the checked-out code only', () => {
    let dir: string;
    const at = (path: string, seconds: number) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), '');
      utimesSync(join(dir, path), seconds, seconds);
    };
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'bench-launch-'));
      writeFileSync(join(dir, 'tsconfig.build.json'), JSON.stringify({ include: ['workers', 'outgoing', 'client'] }));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('refuses without a build', () => {
      at('workers/main.ts', 1_000);
      expect(() => assertBuildCurrent(dir)).toThrow(/dist\/ is missing; run npm run build/);
    });

    it('refuses a build older than a source it compiles, and names that source', () => {
      at('dist/workflow-bundle.js', 2_000);
      at('workers/main.ts', 1_000);
      at('outgoing/engine.ts', 3_000);
      expect(() => assertBuildCurrent(dir)).toThrow(/older than outgoing\/engine\.ts; run npm run build/);
    });

    it('counts the console, which the build bundles, in a folder tsconfig.build.json includes', () => {
      at('dist/workflow-bundle.js', 2_000);
      at('client/console/app.ts', 3_000);
      expect(() => assertBuildCurrent(dir)).toThrow(/older than client\/console\/app\.ts/);
    });

    it('accepts a build newer than every source; tests, benches and dependencies do not count', () => {
      at('dist/workflow-bundle.js', 2_000);
      at('workers/main.ts', 1_000);
      at('workers/main.test.ts', 3_000);
      at('test/unit/x.test.ts', 3_000);
      at('bench/transfers.ts', 3_000);
      at('node_modules/pkg/index.ts', 3_000);
      expect(() => assertBuildCurrent(dir)).not.toThrow();
    });
  });
});
