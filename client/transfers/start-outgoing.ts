/**
 * Starting an outgoing transfer and reading its state, for the API's two front doors (`POST /v1/transfers` and the
 * agent's `POST /tx/create`): the request is stored sealed together with its `outgoing.requested` audit row (one
 * transaction), then its workflow started on the transfer's business id.
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { AuditUnavailableError, ConfigError, NotFoundError } from '../../lib/errors';
import { Asset, SubsidiaryVaspDid, TransferStatus } from '../../lib/temporal/search-attributes';
import { outgoingViewUpdate } from '../../transfer-view/status';
import { writeTransferViewUpdate } from '../../transfer-view/store';
import { auditActor, type Principal } from '../../lib/principal';
import { outgoingTransfer } from '../../workflows';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { OutgoingTransferInput } from '../../workflows/outgoing-transfer';
import {
  initialState,
  transactionCreatedUpdate,
  transferStatusQuery,
  type TransferState,
} from '../../workflows/outgoing-transfer.messages';
import type { TransferContext } from '../../outgoing/context';
import type { TransferPlan } from '../../outgoing/plan';
import type { CreatedTransaction } from '../../outgoing/transaction';
import { assetLabel, type OutgoingRequest } from '../../outgoing/request';

export interface OutgoingStartDeps {
  temporal: Client;
  taskQueue: string;
  transfers?: TransferContext;
  /**
   * Ask for eager start: the server hands the first workflow task back with the start call, to a worker of this
   * process (the all-in-one mode, whose Client shares the worker's NativeConnection), saving a task dispatch.
   */
  eagerStart?: boolean;
}

/** The transfer context, or the ConfigError that says transfers are off because no network is configured. */
export function needTransfers(deps: { transfers?: TransferContext }): TransferContext {
  if (!deps.transfers) {
    throw new ConfigError(
      'BASE_URL',
      'no network is configured, so transfers are off',
      'Set CLIENT_ID, CLIENT_SECRET, AUTH_URL and BASE_URL for the API, or run `npm start`, which points it at the sandbox',
    );
  }
  return deps.transfers;
}

/**
 * Stores the request sealed and starts its workflow; a repeat of the same request finds the running one. `plan` is
 * what the API's check decided (outgoing/checks.ts): the workflow carries it, so the worker does not plan again.
 * `initial`, for a workflow just started, is the state it starts in (it has not run its first task yet).
 */
export async function startOutgoingTransfer(
  deps: OutgoingStartDeps,
  id: string,
  request: OutgoingRequest,
  plan?: TransferPlan,
  requestedBy?: Principal,
  classification?: object,
): Promise<{
  handle: WorkflowHandle<typeof outgoingTransfer>;
  started: boolean;
  input: OutgoingTransferInput;
  initial?: TransferState;
}> {
  const ctx = needTransfers(deps);
  // Who asked for the transfer, in the audit chain in the same transaction as the stored request, before the workflow
  // starts; a repeat of the request (same id) finds the row and appends nothing. No personal data: the parties are
  // VASPs, the customers stay in the sealed request.
  try {
    await ctx.store.put(
      id,
      request,
      requestedBy && {
        entry: {
          actor: auditActor(requestedBy),
          action: 'outgoing.requested',
          subject: id,
          details: {
            source: request.source,
            originatorVaspDid: request.body.originatorVASPdid,
            beneficiaryVaspDid: request.body.beneficiaryVASPdid ?? null,
            asset: assetLabel(request.body.transactionAsset),
            amount: request.body.transactionAmount,
            principal: requestedBy,
          },
        },
        idempotencyKey: `outgoing.requested:${id}`,
      },
      classification,
    );
  } catch (e) {
    if (e instanceof AuditUnavailableError)
      ctx.logger.error({ err: e.cause, id }, 'a transfer request could not be audited, so it was refused');
    throw e;
  }
  const input: OutgoingTransferInput = {
    id,
    originatorVaspDid: request.body.originatorVASPdid,
    beneficiaryVaspDid: request.body.beneficiaryVASPdid,
    asset: assetLabel(request.body.transactionAsset),
    amount: request.body.transactionAmount,
    answerDeadlineMs: ctx.config.answerDeadlineMs,
    pollIntervalMs: ctx.config.pollIntervalMs,
    report: ctx.config.callbackUrl !== undefined,
    ...(plan ? { plan } : {}),
    broadcast: {
      rule: ctx.config.broadcast.bySubsidiary[request.body.originatorVASPdid] ?? ctx.config.broadcast.rule,
      callback: ctx.config.custodyCallbacks,
    },
  };
  const workflowId = workflowIds.outgoingTransfer(id);
  try {
    const handle = await deps.temporal.workflow.start(outgoingTransfer, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...(deps.eagerStart ? { requestEagerStart: true } : {}),
      typedSearchAttributes: [
        { key: TransferStatus, value: 'RECEIVED' },
        { key: SubsidiaryVaspDid, value: input.originatorVaspDid },
        { key: Asset, value: input.asset },
      ],
    });
    // In the console's list from the moment it is accepted; the workflow writes every later state.
    const initial = initialState(input, workflowId, new Date());
    await writeTransferViewUpdate(ctx.pool, outgoingViewUpdate(initial));
    return { handle, started: true, input, initial };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: deps.temporal.workflow.getHandle<typeof outgoingTransfer>(workflowId), started: false, input };
    }
    throw e;
  }
}

export async function transferState(deps: { temporal: Client }, id: string): Promise<TransferState> {
  try {
    return await deps.temporal.workflow.getHandle(workflowIds.outgoingTransfer(id)).query(transferStatusQuery);
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new NotFoundError(`no transfer ${id}`, { field: 'id' });
    throw e;
  }
}

/**
 * The network's transaction once the transfer's workflow has created it (its `transactionCreated` update), or the
 * error that stopped it; undefined when the workflow had already finished: a finished workflow takes no updates, and
 * its state (transferState) says what happened.
 */
export async function createdTransaction(
  deps: { temporal: Client },
  id: string,
): Promise<CreatedTransaction | { error: NonNullable<TransferState['error']> } | undefined> {
  try {
    return await deps.temporal.workflow
      .getHandle(workflowIds.outgoingTransfer(id))
      .executeUpdate(transactionCreatedUpdate);
  } catch (e) {
    if (
      e instanceof WorkflowUpdateFailedError ||
      e instanceof WorkflowNotFoundError ||
      /completed|closed/i.test((e as Error).message)
    )
      return undefined;
    throw e;
  }
}
