// Jest runs the project's TypeScript and its ESM-only dependencies (ky, jose, @noble/*, multiformats, did-jwt, ...)
// through swc into CommonJS. Resolution adds the `module-sync` export condition, which is what Node 20.19+ itself uses
// when CommonJS code require()s an ESM package, so tests load the same files the running system loads.
const esmOnly = [
  'ky',
  'jose',
  '@noble',
  '@scure',
  'micro-packed',
  'multiformats',
  'did-jwt',
  'uint8arrays',
  'node-pg-migrate',
  'typebox',
  '@fastify/type-provider-typebox',
  'canonicalize',
  'content-disposition',
];

const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs', ignoreDynamic: false },
  },
];

const common = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons', 'module-sync'] },
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  setupFilesAfterEnv: ['<rootDir>/test/harness/exit-code-guard.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  reporters: ['default', '<rootDir>/test/harness/summary-reporter.js'],
  // Integration tests start workflows and processes; jest only honours this at the root, not per project.
  testTimeout: 120_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      setupFiles: ['<rootDir>/test/harness/quiet-runtime.ts'],
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    },
    {
      // The same harness on the real Temporal server on PostgreSQL (what `npm run start:cluster` runs), started once.
      ...common,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/cluster.ts',
      setupFiles: ['<rootDir>/test/harness/quiet-runtime.ts', '<rootDir>/test/harness/cluster-env.ts'],
      globalTeardown: '<rootDir>/test/harness/cluster-teardown.ts',
    },
  ],
};
