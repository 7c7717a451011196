import type { Pool } from 'pg';
import type { AddressBookConfig } from './config';
import type { Heartbeat } from '../lib/heartbeat';
import type { Logger } from '../lib/logger';
import type { NetworkClient } from '../network/client';

/** What every step of a reconciliation run works with. */
export interface AddressBookDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  settings: AddressBookConfig;
  /** A workflow's status by Temporal ('RUNNING', 'TERMINATED', … or 'NOT_FOUND'): a run lock held by a run whose
   *  workflow is gone is released. Without it, such a lock waits for an operator (the API releases it too). */
  workflowStatus?: (workflowId: string) => Promise<string>;
  /** Reports progress of a long step, so the activity running it is not taken for dead (none outside an activity). */
  heartbeat?: Heartbeat;
}
