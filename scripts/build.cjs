#!/usr/bin/env node
// `npm run build`: what production runs. Compiles the TypeScript to dist/ (tsconfig.build.json: no tests, no
// benchmarks), copies the files the code reads at run time (SQL migrations, the console's static files), bundles the
// console's TypeScript into dist/client/console/app.js (checked first against the DOM's types only), and prebuilds the
// workflow bundle into dist/workflow-bundle.js, which workers load instead of bundling workflows/ at every start.
'use strict';
const { spawnSync } = require('node:child_process');
const { cpSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const dist = join(root, 'dist');
const step = (what) => process.stderr.write(`build: ${what}\n`);

rmSync(dist, { recursive: true, force: true });
for (const project of ['tsconfig.build.json', join('client', 'console', 'tsconfig.json')]) {
  step(`tsc -p ${project}`);
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}

step('assets: db/migrations, client/console');
cpSync(join(root, 'db', 'migrations'), join(dist, 'db', 'migrations'), { recursive: true });
mkdirSync(join(dist, 'client', 'console'), { recursive: true });
for (const name of ['index.html', 'app.css'])
  cpSync(join(root, 'client', 'console', name), join(dist, 'client', 'console', name));

step('console: client/console/app.ts into dist/client/console/app.js');
// The same bundling the API does when it runs from source.
const { bundleConsoleScript } = require(join(dist, 'client', 'api', 'routes', 'console.js'));
const consoleScript = bundleConsoleScript(join(root, 'client', 'console', 'app.ts')).then(
  (script) => writeFileSync(join(dist, 'client', 'console', 'app.js'), script),
  (e) => {
    process.stderr.write(`build: the console bundle failed: ${e.message}\n`);
    process.exit(1);
  },
);

step('workflow bundle');
const { bundleWorkflowCode } = require('@temporalio/worker');
const quiet = { trace() {}, debug() {}, info() {}, warn: (m) => step(m), error: (m) => step(m), log() {} };
consoleScript
  .then(() =>
    bundleWorkflowCode({
      workflowsPath: join(dist, 'workflows'),
      // Tracing's workflow interceptors (workflows/tracing-interceptors.ts): a worker cannot add them to a bundle.
      workflowInterceptorModules: [join(dist, 'workflows', 'tracing-interceptors.js')],
      failureConverterPath: join(dist, 'lib', 'temporal', 'failure-converter.js'),
      logger: quiet,
    }),
  )
  .then(
    ({ code }) => {
      writeFileSync(join(dist, 'workflow-bundle.js'), code);
      step(`done: dist/ (workflow bundle ${(code.length / 1024).toFixed(0)} KiB)`);
    },
    (e) => {
      process.stderr.write(`build: the workflow bundle failed: ${e.message}\n`);
      process.exit(1);
    },
  );
