/**
 * Changes to a live transaction through the agent's `POST /tx/update` (on the API and on the agent listener), recorded
 * in the audit chain `transaction`: who asked (the principal, as every audit row names it), which transaction, and the
 * names of the fields changed, never their values (the parties' data among them).
 *
 * The transaction lives at the network, so its change cannot share a database transaction with its row. The row comes
 * first, in a transaction of its own, after the request is checked and before anything is sent (the parties' data to
 * the personal-data service included): when it cannot be written the request answers 503 (AuditUnavailableError) and
 * nothing is sent, so no change goes unrecorded. An update that is then refused before it reaches the network, or by
 * the network (a 4xx), gets a second row saying so; one whose outcome is unknown (the network unreachable, a 5xx)
 * keeps the first row alone. A request refused by its checks (401, 403, 400) writes no row.
 */
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { recordAuditEntry } from '../../audit/store';
import { AuditUnavailableError, isAppError } from '../../lib/errors';
import { auditActor, type Principal } from '../../lib/principal';
import type { NetworkTransaction } from '../../network/transactions';
import { checkAgentUpdate, prepareAgentUpdate, sendAgentUpdate } from '../../outgoing/agent-update';
import type { TransferContext } from '../../outgoing/context';

export const TX_UPDATE_ACTIONS = {
  /** Written before the update is sent. */
  requested: 'transaction.update.requested',
  /** The update was not made: refused here after its row was written, or by the network. */
  refused: 'transaction.update.refused',
} as const;

export interface TxUpdateCall {
  principal: Principal;
  /** Which front door: the API (authenticated) or the loopback agent listener. */
  listener: 'api' | 'agent';
  body: Record<string, unknown> & { id: string };
  hybrid: boolean;
}

/** Checks, records, then sends an agent update; see the file's comment for what is recorded when. */
export async function auditedTxUpdate(
  ctx: TransferContext,
  request: FastifyRequest,
  call: TxUpdateCall,
): Promise<NetworkTransaction> {
  const fields = checkAgentUpdate(call.body);
  const details = {
    route: `${request.method} ${request.routeOptions.url}`,
    listener: call.listener,
    transactionId: call.body.id,
    fields,
    hybrid: call.hybrid,
    principal: call.principal,
  };
  try {
    await recordAuditEntry(ctx.pool, {
      actor: auditActor(call.principal),
      action: TX_UPDATE_ACTIONS.requested,
      subject: call.body.id,
      details,
    });
  } catch (e) {
    request.log.error(
      { err: e, subject: call.body.id },
      'an update of a transaction could not be audited, so it was not sent',
    );
    throw new AuditUnavailableError(
      'the audit log could not record this update, so it was not sent; try again shortly',
      { action: TX_UPDATE_ACTIONS.requested },
    );
  }
  let sending = false;
  try {
    const prepared = await prepareAgentUpdate(ctx, call.body, call.hybrid);
    sending = true;
    return await sendAgentUpdate(ctx, prepared);
  } catch (e) {
    if (!sending || refusedByNetwork(e)) await recordRefusal(ctx.pool, request, call, details, e);
    throw e;
  }
}

/** A definite refusal (4xx, a timeout aside): the network did not apply the update. */
export function refusedByNetwork(e: unknown): boolean {
  const status = isAppError(e) ? e.details.networkStatus : undefined;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 408;
}

/** Best effort: the update was not made either way, and the caller gets the refusal; a lost row is logged. */
async function recordRefusal(
  pool: Pool,
  request: FastifyRequest,
  call: TxUpdateCall,
  details: Record<string, unknown>,
  e: unknown,
): Promise<void> {
  const error = isAppError(e)
    ? {
        status: e.httpStatus,
        type: e.name,
        ...(typeof e.details.networkStatus === 'number' ? { networkStatus: e.details.networkStatus } : {}),
      }
    : { type: 'Error' };
  try {
    await recordAuditEntry(pool, {
      actor: auditActor(call.principal),
      action: TX_UPDATE_ACTIONS.refused,
      subject: call.body.id,
      details: { ...details, error },
    });
  } catch (err) {
    request.log.error({ err, subject: call.body.id }, 'a refused update of a transaction could not be audited');
  }
}
