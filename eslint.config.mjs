// @ts-check
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

/**
 * The layers of the repository (README, "Where things live"): each folder imports only from the folders listed for it.
 * A rule per folder and depth, since a top-level folder is `../x` from `keys/a.ts` and `../../x` from
 * `address-book/store/a.ts`.
 */
/** The capabilities: one folder each, holding its logic, its workflow-safe types.ts (and status.ts) and its SQL. */
const capabilities = [
  'keys',
  'address-book',
  'outgoing',
  'incoming',
  'screening',
  'audit',
  'transfer-view',
  'retention',
  'auth',
  'webhooks',
  'counterparties',
  'policy',
  'pricing',
  'jurisdictions',
  'wallet-proofs',
  'deposits',
  'custody',
];
const layers = {
  lib: { only: [], why: 'lib/ holds what several capabilities share and imports nothing above it' },
  // db/migrate-cli.ts, an entry point, reads the configuration.
  db: { only: ['lib', 'config'], why: 'db/ holds the pool, the migrations and their runner, over lib/ only' },
  network: { only: ['lib', 'db'], why: 'network/ is the one client of the network, over lib/ and db/ only' },
  // A capability may use another (outgoing writes audit rows, reads the address book), never the roles above it.
  ...Object.fromEntries(
    capabilities.map((c) => [
      c,
      {
        only: ['lib', 'db', 'network', ...capabilities],
        why: `${c}/ is a capability: it uses lib/, db/, network/ and other capabilities, never workflows/, activities/, client/ or config/`,
      },
    ]),
  ),
  config: {
    only: ['lib', 'network', ...capabilities],
    why: 'config/ builds the one configuration from the sections the capabilities define',
  },
  activities: {
    only: ['lib', 'db', 'network', 'config', 'workflows', ...capabilities],
    why: 'activities/ adapts the capabilities for Temporal',
  },
  workers: {
    only: ['lib', 'db', 'network', 'config', 'workflows', 'activities', 'client', ...capabilities],
    why: 'workers/ runs the activities and workflows (and, all in one, the API beside them)',
  },
  client: {
    only: ['lib', 'db', 'network', 'config', 'workflows', ...capabilities],
    why: 'client/ calls the capabilities and starts workflows, never activities/',
  },
  sandbox: {
    only: ['lib', 'db', 'config', 'keys'],
    why: "sandbox/ is the network's side: lib/, the key records of keys/ and its own schema only",
  },
};
const layerRules = Object.entries(layers).flatMap(([folder, { only, why }]) =>
  [1, 2, 3, 4].map((depth) => ({
    files: [`${folder}/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          // Heartbeats, cancellation and the activity's identity reach a capability as functions and values the activity
          // passes in (activities/context.ts reads them).
          paths:
            folder === 'activities'
              ? []
              : [
                  {
                    name: '@temporalio/activity',
                    message: 'Only activities/ touches the activity context: pass heartbeats in as a function.',
                  },
                ],
          patterns: [
            {
              // Leaving the folder (`depth` times ../) for anything but the allowed folders.
              regex: `^(\\.\\./){${depth}}(?!(${only.join('|') || '$^'})(/|$))`,
              message: `${why} (README, Where things live).`,
            },
          ],
        },
      ],
    },
  })),
);

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      'dist/**',
      'coverage/**',
      '**/*.cjs',
      '**/*.js',
      '**/*.mjs',
      'test/fixtures/**/*.json',
    ],
  },
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
    // The console runs in the browser, bundled by esbuild with Preact and htm left to index.html's import map: it talks
    // to the API over HTTP and imports nothing of the server. uPlot (the dashboard's charts) is bundled into it.
    files: ['client/console/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|preact$|preact/hooks$|htm$|uplot$)',
              message:
                "The console imports only its own modules, what index.html's import map names (preact, preact/hooks, htm) and uPlot, bundled.",
            },
          ],
        },
      ],
    },
  },
  {
    // One configuration: the environment is read once at start (config/index.ts; the sandbox's own sandbox/config.ts) and
    // the sections are passed in. Scripts, tests and benchmarks set up processes and may read it.
    files: ['**/*.ts'],
    ignores: ['config/index.ts', 'sandbox/config.ts', 'scripts/**', 'test/**', 'bench/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message:
            'Read settings in config/index.ts (or sandbox/config.ts) and pass the section in (docs/configuration.md).',
        },
      ],
    },
  },
  {
    // Workflows are replayed deterministically inside Temporal's sandbox: they orchestrate, they never do I/O.
    // Activities may be imported for their types only (proxyActivities<Activities>).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.flatMap((m) => [
              { name: m, message: 'No Node built-ins in workflows: move the I/O into an activity.' },
              { name: `node:${m}`, message: 'No Node built-ins in workflows: move the I/O into an activity.' },
            ]),
            ...[
              'pg',
              'ky',
              'jose',
              'fastify',
              'pino',
              '@temporalio/client',
              '@temporalio/worker',
              '@temporalio/activity',
            ].map((m) => ({
              name: m,
              message: 'Workflows do no I/O and use only @temporalio/workflow; call an activity instead.',
            })),
          ],
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              allowTypeImports: true,
              message: 'Import activities type-only (import type …) and call them through proxyActivities.',
            },
            {
              group: [
                '**/db/**',
                '**/client/**',
                '**/sandbox/**',
                '**/workers/**',
                '**/lib/crypto/**',
                '**/lib/logger',
              ],
              message: 'Workflows may not import I/O code.',
            },
            // The layers table's row for workflows/: lib/, activity types and the capabilities' workflow-safe types.ts and
            // status.ts, nothing else of the repository.
            {
              regex: `^\\.\\./(?!((lib|activities)(/|$))|((${capabilities.join('|')})/(types|status)$))`,
              message:
                "workflows/ imports only workflow-safe lib/ modules, activity types and capabilities' types.ts and status.ts (README, Where things live).",
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'No I/O in workflows: use an activity.' },
        { name: 'setInterval', message: 'Use sleep() or condition() from @temporalio/workflow.' },
        { name: 'process', message: 'Workflows must not read the environment.' },
      ],
    },
  },
);
