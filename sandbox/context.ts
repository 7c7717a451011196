import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import type { TokenService } from './auth/tokens';
import type { SandboxConfig } from './config';
import type { Faults } from './faults';

/** What every part of the sandbox may use. Parts keep their own tables in the sandbox schema. */
export interface SandboxContext {
  pool: Pool;
  config: SandboxConfig;
  tokens: TokenService;
  logger: Logger;
  /** Network faults switched on at run time (sandbox/faults); none unless SANDBOX_FAULTS=1 and configured. */
  faults: Faults;
}
