import type { Pool } from 'pg';
import { deliverCustodyCallback } from '../custody/callback';
import { broadcastWebhookId } from '../outgoing/status';
import type { BroadcastEvent } from '../outgoing/types';
import { activityIdempotencyKey } from './context';

/** Outgoing transfers' callbacks to the custody system (workflows/outgoing-transfer.ts; the rule in outgoing/status.ts). */
export function custodyActivities(deps: { pool: Pool; custody?: { url?: string; secret?: string } }) {
  return {
    /** `transfer.release` or `transfer.halt`, signed; throws (retried) until the custody system answers 2xx. */
    async deliverTransferCallback(input: {
      id: string;
      event: BroadcastEvent;
      body: Record<string, unknown>;
    }): Promise<{ delivered: boolean }> {
      return deliverCustodyCallback(
        { pool: deps.pool, ...deps.custody },
        {
          event: input.event,
          subject: input.id,
          webhookId: broadcastWebhookId(input.id, input.event),
          body: input.body,
          actor: 'system:outgoing',
          auditAction: 'outgoing.callback-delivered',
        },
        activityIdempotencyKey(),
      );
    },
  };
}
