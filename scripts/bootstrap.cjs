#!/usr/bin/env node
// Entry point of `npm start` and `npm test` on a fresh clone: no dependency may be assumed here. It checks Node,
// installs node_modules when they are missing or older than package-lock.json (fast when nothing changed), then hands
// over to the TypeScript scripts.
'use strict';
const { spawnSync, spawn } = require('node:child_process');
const { existsSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(
    `Node ${process.versions.node} is too old: this project needs Node 20.19 or newer (require(esm)). Install it from https://nodejs.org or with your version manager.`,
  );
  process.exit(1);
}

function ensureDependencies() {
  const lock = join(root, 'package-lock.json');
  const installed = join(root, 'node_modules', '.package-lock.json');
  const stale = !existsSync(installed) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(installed).mtimeMs);
  if (!stale) return;
  // `npm install`, not `npm ci`: with a lockfile it installs the locked versions just the same, but npm 11's `ci`
  // refuses lockfiles that leave out other platforms' optional binaries (@swc/core-darwin-*, …), as npm writes them.
  console.error('Installing dependencies (npm install, from package-lock.json)…');
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('npm install failed; see the output above.');
    process.exit(r.status ?? 1);
  }
}

function run(args, extraEnv = {}) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...extraEnv } });
  // Ctrl-C reaches the whole process group; the child decides how to stop, and this process follows its exit code.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const [command, ...rest] = process.argv.slice(2);
ensureDependencies();
if (command === 'start') {
  run([tsx, join(root, 'scripts', 'start.ts'), ...rest]);
} else if (command === 'test') {
  // Build the Temporal CLI (dev server) and the Temporal server with its SQL tool (the cluster suite) before jest starts,
  // so their progress is visible rather than hidden in globalSetup.
  // Chromium (Debian's, for the console's browser tests) is installed the same way when missing.
  for (const script of ['temporal-cli.ts', 'temporal-server.ts', 'chromium.ts']) {
    const built = spawnSync(process.execPath, [tsx, join(root, 'scripts', script)], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (built.status !== 0) process.exit(built.status ?? 1);
  }
  // Formatting, types and lint first: they fail in seconds, where the suite takes minutes. Skipped when only some tests
  // are asked for.
  if (rest.length === 0) {
    for (const [what, args] of [
      [
        'format check (npm run format fixes it)',
        [join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', '--log-level', 'warn', '.'],
      ],
      ['typecheck', [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json']],
      ['lint', [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '.']],
    ]) {
      console.error(`npm test: ${what}…`);
      const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
      if (r.status !== 0) {
        console.error(`npm test: ${what} failed`);
        process.exit(r.status ?? 1);
      }
    }
  }
  const jestArgs = [jest, ...(process.env.CI ? ['--ci'] : []), ...rest];
  // The whole suite ends with a reduced chaos run (the stack killed and restarted under network faults, bench/chaos.ts)
  // on a fresh seed each time, printed so a failure can be replayed: a regression that only shows under faults fails
  // here instead of waiting for someone to run `npm run chaos` by hand. TEST_CHAOS_SCALE sets its size (0 skips it).
  const chaosScale = process.env.TEST_CHAOS_SCALE ?? '0.05';
  if (rest.length === 0 && chaosScale !== '0') {
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => undefined);
    const tests = spawnSync(process.execPath, jestArgs, { cwd: root, stdio: 'inherit' });
    if (tests.status !== 0) {
      // A signal would otherwise end the run with no word of why.
      console.error(
        `npm test: jest ended with ${tests.signal ? `signal ${tests.signal}` : `exit code ${tests.status}`}`,
      );
      process.exit(tests.status ?? 1);
    }
    console.error(`npm test: chaos run at scale ${chaosScale} (TEST_CHAOS_SCALE; 0 skips it)…`);
    run([tsx, join(root, 'bench', 'chaos.ts'), `--scale=${chaosScale}`]);
  } else {
    run(jestArgs);
  }
} else {
  console.error('usage: node scripts/bootstrap.cjs start|test [args…]');
  process.exit(2);
}
