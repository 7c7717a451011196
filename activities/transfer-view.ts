import type { Pool } from 'pg';
import { writeTransferViewUpdate } from '../transfer-view/store';
import type { TransferViewUpdate } from '../transfer-view/types';

/** The console's transfer list, written by the transfer workflows at each change of their state. */
export function transferViewActivities(deps: { pool: Pool }) {
  return {
    async recordTransferView(update: TransferViewUpdate): Promise<void> {
      await writeTransferViewUpdate(deps.pool, update);
    },
  };
}
