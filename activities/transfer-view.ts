import type { Pool } from 'pg';
import { writeTransferViewUpdate } from '../db/transfer-view';
import type { TransferViewUpdate } from '../lib/transfer-view';

/** The console's transfer list, written by the transfer workflows at each change of their state. */
export function transferViewActivities(deps: { pool: Pool }) {
  return {
    async recordTransferView(update: TransferViewUpdate): Promise<void> {
      await writeTransferViewUpdate(deps.pool, update);
    },
  };
}
