// @ts-check
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises', 'http', 'http2',
  'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers', 'tls', 'url', 'util', 'v8', 'vm',
  'worker_threads', 'zlib',
];

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
