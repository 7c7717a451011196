import { join } from 'node:path';
import { loadConfig } from '../config';
import type { ApiTransportConfig } from '../lib/api-transport';
import { ConfigError } from '../lib/errors';
import { MIN_OPERATOR_TOKEN_LENGTH } from './auth/test-routes';
import { addressBookOptionsFromEnv } from './address-book/options';
import { rateLimitFromEnv } from './rate-limit';

export interface SandboxConfig {
  host: string;
  port: number;
  /** The address clients use; it is also the API audience, as `https://api.notabene.dev` is on the real network. */
  publicUrl: string;
  /** The personal-data service lives under `/pii` here; its audience is its own base URL. */
  piiUrl: string;
  /** Seed file with VASPs, nesting, users and credentials (the operator's part). */
  seedFile?: string;
  /** SANDBOX_FAULTS=1: `PUT /sandbox/faults` may switch network faults on (sandbox/faults). */
  faults?: boolean;
  /** The sandbox's database (SANDBOX_DATABASE_URL, else DATABASE_URL); sandbox/main.ts only. */
  databaseUrl?: string;
  /** LOG_LEVEL; sandbox/main.ts only. */
  logLevel?: string;
  /** TLS_CERT_FILE and TLS_KEY_FILE, as the API reads them; sandbox/main.ts serves HTTPS with them when set. */
  transport?: ApiTransportConfig;
  /** SANDBOX_TEST_ROUTES=1: the `/sandbox/*` test routes exist (sandbox/auth/test-routes.ts); off by default. */
  testRoutes?: boolean;
  /** SANDBOX_OPERATOR_TOKEN: the bearer token the test routes require; needed when they are on. */
  operatorToken?: string;
}

function testRoutesFromEnv(
  env: Record<string, string | undefined>,
): Pick<SandboxConfig, 'testRoutes' | 'operatorToken'> {
  const testRoutes = env.SANDBOX_TEST_ROUTES === '1';
  const operatorToken = env.SANDBOX_OPERATOR_TOKEN || undefined;
  if (testRoutes && (!operatorToken || operatorToken.length < MIN_OPERATOR_TOKEN_LENGTH)) {
    throw new ConfigError(
      'SANDBOX_OPERATOR_TOKEN',
      `SANDBOX_TEST_ROUTES=1 needs an operator token of at least ${MIN_OPERATOR_TOKEN_LENGTH} characters`,
      'Set SANDBOX_OPERATOR_TOKEN=$(openssl rand -base64 32), or leave SANDBOX_TEST_ROUTES unset',
    );
  }
  return { testRoutes, operatorToken };
}

/** The sandbox's settings, read once by sandbox/main.ts (the sandbox's counterpart of config/index.ts). */
export function loadSandboxConfig(env: Record<string, string | undefined> = process.env): SandboxConfig {
  const base = loadConfig(env);
  const publicUrl = (env.SANDBOX_PUBLIC_URL || `http://127.0.0.1:${base.sandboxPort}`).replace(/\/+$/, '');
  return {
    host: base.host,
    port: base.sandboxPort,
    publicUrl,
    piiUrl: `${publicUrl}/pii`,
    seedFile: env.SANDBOX_SEED || undefined,
    faults: env.SANDBOX_FAULTS === '1',
    databaseUrl: base.sandboxDatabaseUrl ?? base.databaseUrl,
    logLevel: base.logLevel,
    transport: base.transport,
    ...testRoutesFromEnv(env),
    // SANDBOX_UPLOAD_DIR (default: a private directory under DATA_DIR), SANDBOX_UPLOAD_MAX_BYTES,
    // SANDBOX_UPLOAD_URL_TTL_SECONDS, SANDBOX_ADDRESS_BATCH_SIZE
    addressBook: { spoolDir: join(base.dataDir, 'sandbox', 'address-uploads'), ...addressBookOptionsFromEnv(env) },
    // SANDBOX_RATE_LIMIT, SANDBOX_RATE_WINDOW, SANDBOX_RATE_LOCKOUT: the network's quota unless set otherwise.
    rateLimit: rateLimitFromEnv(env),
  };
}
