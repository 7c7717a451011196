import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import { pruneExpiredRecords, type PruneInput, type PruneResult } from '../retention/prune';
import { activityIdempotencyKey, activityWorkflowId, cancelled, heartbeat } from './context';

export type { PruneInput, PruneResult } from '../retention/prune';

/** The nightly retention sweep's activity (see retention/prune.ts). */
export function retentionActivities(deps: { pool: Pool; logger?: Logger; batchRows?: number }) {
  return {
    async pruneExpiredRecords(input: PruneInput): Promise<PruneResult> {
      return pruneExpiredRecords(deps, input, {
        heartbeat,
        cancelled,
        workflowId: activityWorkflowId(),
        idempotencyKey: activityIdempotencyKey(),
      });
    },
  };
}
