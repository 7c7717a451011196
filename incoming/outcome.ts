import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import { postTransferOutcome } from '../lib/transfer-callback';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { writeTransferViewOrLog } from '../transfer-view/store';
import type { TransferViewUpdate } from '../transfer-view/types';
import type { IncomingOutcomeReport } from './types';

/**
 * Tells the internal systems (TRANSFER_CALLBACK_URL) how an incoming transfer ended or that it needs a person; nothing
 * without one. A retried report carries the same Idempotency-Key (the workflow's id and the outcome), as an outgoing
 * transfer's does.
 */
export async function reportIncomingOutcome(
  callbackUrl: string | undefined,
  report: IncomingOutcomeReport,
): Promise<void> {
  if (!callbackUrl) return;
  await postTransferOutcome(
    callbackUrl,
    { direction: 'incoming', ...report },
    { 'Idempotency-Key': `${workflowIds.incomingTransfer(report.transactionId)}:${report.outcome}` },
  );
}

/**
 * The incoming workflow's last step: the console's list entry for the final state, then the outcome report. A failed
 * list write is logged and answered (the workflow writes it again), not thrown, so that only the report's failure makes
 * Temporal retry the step, which writes the entry again with each attempt.
 */
export async function finishIncomingTransfer(
  deps: { pool: Pool; logger: Logger; callbackUrl?: string },
  input: { view: TransferViewUpdate; report: IncomingOutcomeReport },
): Promise<{ viewWritten: boolean }> {
  const viewWritten = await writeTransferViewOrLog(deps.pool, deps.logger, input.view);
  await reportIncomingOutcome(deps.callbackUrl, input.report);
  return { viewWritten };
}
