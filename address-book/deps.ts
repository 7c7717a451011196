import type { Pool } from 'pg';
import type { AddressBookConfig } from '../lib/address-book/config';
import type { Logger } from '../lib/logger';
import type { NetworkClient } from '../network/client';

/** What every step of a reconciliation run works with. */
export interface AddressBookDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  settings: AddressBookConfig;
}
