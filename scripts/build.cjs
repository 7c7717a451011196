#!/usr/bin/env node
// `npm run build`: what production runs. Compiles the TypeScript to dist/ (tsconfig.build.json: no tests, no
// benchmarks), copies the files the code reads at run time (SQL migrations, the console's static files), and prebuilds
// the workflow bundle into dist/workflow-bundle.js, which workers load instead of bundling workflows/ at every start.
'use strict';
const { spawnSync } = require('node:child_process');
const { cpSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const dist = join(root, 'dist');
const step = (what) => process.stderr.write(`build: ${what}\n`);

rmSync(dist, { recursive: true, force: true });
step('tsc -p tsconfig.build.json');
const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

step('assets: db/migrations, client/console');
cpSync(join(root, 'db', 'migrations'), join(dist, 'db', 'migrations'), { recursive: true });
mkdirSync(join(dist, 'client', 'console'), { recursive: true });
for (const name of ['index.html', 'app.css', 'app.js']) cpSync(join(root, 'client', 'console', name), join(dist, 'client', 'console', name));

step('workflow bundle');
const { bundleWorkflowCode } = require('@temporalio/worker');
const quiet = { trace() {}, debug() {}, info() {}, warn: (m) => step(m), error: (m) => step(m), log() {} };
bundleWorkflowCode({
  workflowsPath: join(dist, 'workflows'),
  failureConverterPath: join(dist, 'lib', 'temporal', 'failure-converter.js'),
  logger: quiet,
}).then(
  ({ code }) => {
    writeFileSync(join(dist, 'workflow-bundle.js'), code);
    step(`done: dist/ (workflow bundle ${(code.length / 1024).toFixed(0)} KiB)`);
  },
  (e) => {
    process.stderr.write(`build: the workflow bundle failed: ${e.message}\n`);
    process.exit(1);
  },
);
