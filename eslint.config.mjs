// @ts-check
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises', 'http', 'http2',
  'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers', 'tls', 'url', 'util', 'v8', 'vm',
  'worker_threads', 'zlib',
];

/**
 * The layers of the repository (README, Layout): each folder imports only from the folders listed for it. A rule per
 * folder and depth, since a top-level folder is `../x` from `db/a.ts` and `../../x` from `db/keystore/a.ts`.
 */
const domain = ['outgoing', 'incoming', 'address-book', 'screening', 'retention', 'audit', 'transfer-view', 'callback'];
/** A domain folder's row: the folders it may import, as the README's table lists them. */
const domainLayer = (folder, only) => ({ only, why: `${folder}/ is domain code over ${only.map((f) => `${f}/`).join(', ')} only` });
const layers = {
  lib: { only: [], why: 'lib/ is shared by all and imports nothing above it' },
  db: { only: ['lib'], why: 'db/ holds the SQL over lib/ only' },
  network: { only: ['lib'], why: 'network/ is the network\'s HTTP client over lib/ only' },
  callback: { only: ['lib'], why: 'callback/ posts to the internal systems over lib/ only' },
  outgoing: domainLayer('outgoing', ['lib', 'db', 'network', 'callback', 'workflows']),
  incoming: domainLayer('incoming', ['lib', 'db', 'network', 'workflows']),
  'address-book': domainLayer('address-book', ['lib', 'db', 'network']),
  retention: domainLayer('retention', ['lib', 'db']),
  audit: domainLayer('audit', ['lib', 'db']),
  screening: domainLayer('screening', ['lib', 'db']),
  'transfer-view': domainLayer('transfer-view', ['lib', 'db', 'network', 'workflows']),
  activities: { only: ['lib', 'db', 'network', 'workflows', ...domain], why: 'activities/ adapts the domain modules for Temporal' },
  workers: { only: ['lib', 'db', 'network', 'workflows', 'activities', ...domain], why: 'workers/ runs the activities and workflows' },
  client: { only: ['lib', 'db', 'network', 'workflows', ...domain], why: 'client/ calls the domain modules, never activities/' },
  sandbox: { only: ['lib', 'db'], why: 'sandbox/ is the network\'s side: lib/ and its own schema in db/ only' },
  'all-in-one': { only: ['lib', 'client', 'workers'], why: 'all-in-one/ only joins the API process and the worker process in one' },
};
const layerRules = Object.entries(layers).flatMap(([folder, { only, why }]) =>
  [1, 2, 3, 4].map((depth) => ({
    files: [`${folder}/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          // Leaving the folder (`depth` times ../) for anything but the allowed folders.
          regex: `^(\\.\\./){${depth}}(?!(${only.join('|') || '$^'})(/|$))`,
          message: `${why} (README, Layout).`,
        }],
      }],
    },
  })),
);

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'dist/**', 'coverage/**', '**/*.cjs', '**/*.js', '**/*.mjs', 'test/fixtures/**/*.json'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules,
  {
    // One configuration: the environment is read once at start (lib/config.ts; the sandbox's own sandbox/config.ts) and
    // the sections are passed in. Scripts, tests and benchmarks set up processes and may read it.
    files: ['**/*.ts'],
    ignores: ['lib/config.ts', 'sandbox/config.ts', 'scripts/**', 'test/**', 'bench/**'],
    rules: {
      'no-restricted-properties': ['error', {
        object: 'process', property: 'env',
        message: 'Read settings in lib/config.ts (or sandbox/config.ts) and pass the section in (README, Environment variables).',
      }],
    },
  },
  {
    // Workflows are replayed deterministically inside Temporal's sandbox: they orchestrate, they never do I/O.
    // Activities may be imported for their types only (proxyActivities<Activities>).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.flatMap((m) => [
            { name: m, message: 'No Node built-ins in workflows: move the I/O into an activity.' },
            { name: `node:${m}`, message: 'No Node built-ins in workflows: move the I/O into an activity.' },
          ]),
          ...['pg', 'ky', 'jose', 'fastify', 'pino', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map((m) => ({
            name: m, message: 'Workflows do no I/O and use only @temporalio/workflow; call an activity instead.',
          })),
        ],
        patterns: [
          { group: ['**/activities', '**/activities/**'], allowTypeImports: true, message: 'Import activities type-only (import type …) and call them through proxyActivities.' },
          { group: ['**/db/**', '**/client/**', '**/sandbox/**', '**/workers/**', '**/lib/crypto/**', '**/lib/logger'], message: 'Workflows may not import I/O code.' },
          // The layers table's row for workflows/ (README, Layout): lib/ and activity types, nothing else of the repository.
          { regex: '^\\.\\./(?!(lib|activities)(/|$))', message: 'workflows/ imports only workflow-safe lib/ modules and activity types (README, Layout).' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'fetch', message: 'No I/O in workflows: use an activity.' },
        { name: 'setInterval', message: 'Use sleep() or condition() from @temporalio/workflow.' },
        { name: 'process', message: 'Workflows must not read the environment.' },
      ],
    },
  },
);
