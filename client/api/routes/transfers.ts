import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { Type } from 'typebox';
import type { TransferContext } from '../../../activities/transfers';
import { assertOriginatorAllowed, publishedKey } from '../../../activities/transfers/engine';
import { assetLabel, OutgoingTransferBody, validateOutgoingBody, type OutgoingRequest } from '../../../activities/transfers/request';
import { ConfigError, NotFoundError, ValidationError } from '../../../lib/errors';
import { listKeys } from '../../../db/keystore';
import { Asset, SubsidiaryVaspDid, TransferStatus } from '../../../lib/temporal/search-attributes';
import { outgoingTransfer } from '../../../workflows';
import type { OutgoingTransferInput } from '../../../workflows/outgoing-transfer';
import { initialState, transferStatusQuery, type TransferState } from '../../../workflows/outgoing-transfer.messages';
import { workflowIds } from '../../../workflows/ids';
import { writeTransferViewUpdate } from '../../../db/transfer-view';
import { outgoingViewUpdate } from '../../../lib/transfer-view';

export interface TransferRouteDeps {
  temporal: Client;
  taskQueue: string;
  transfers?: TransferContext;
}

const KEY = /^[A-Za-z0-9._:-]{1,128}$/;

const ErrorInfo = Type.Object({
  type: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
  rule: Type.Optional(Type.String()),
});

export const TransferStateSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  status: Type.String({ description: 'RECEIVED, PREPARED, then the network status (NEW, SENT, ACK, ACCEPTED, …); FAILED or EXPIRED' }),
  final: Type.Boolean(),
  originatorVaspDid: Type.String(),
  beneficiaryVaspDid: Type.Optional(Type.String()),
  asset: Type.String(),
  amount: Type.String(),
  mode: Type.Optional(Type.String({ description: 'end-to-end, hybrid, escrow, originator-only or hosted' })),
  transactionId: Type.Optional(Type.String()),
  error: Type.Optional(ErrorInfo),
  history: Type.Array(Type.Object({ status: Type.String(), at: Type.String(), source: Type.String() })),
});

export function needTransfers(deps: { transfers?: TransferContext }): TransferContext {
  if (!deps.transfers) {
    throw new ConfigError('BASE_URL', 'no network is configured, so transfers are off', 'Set CLIENT_ID, CLIENT_SECRET, AUTH_URL and BASE_URL for the API, or run `npm start`, which points it at the sandbox');
  }
  return deps.transfers;
}

/**
 * Checks a request before anything is stored or started, so bad input answers 400 naming the field and leaves no
 * trace: the body and its IVMS101, the originator (not the gateway, in the group, keys held when required), and the
 * beneficiary VASP when named (it must be in the directory).
 */
export async function checkOutgoingRequest(ctx: TransferContext, body: unknown, opts: { requireOriginatorKey: boolean }): Promise<OutgoingTransferBody> {
  validateOutgoingBody(body);
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  if (opts.requireOriginatorKey) {
    const keys = await listKeys(ctx.pool, body.originatorVASPdid);
    if (!keys.some((k) => k.state === 'active')) {
      throw new ValidationError('originatorVASPdid', 'has no active key in the keystore, so its data cannot be encrypted end to end');
    }
  }
  if (body.beneficiaryVASPdid) await publishedKey(ctx, body.beneficiaryVASPdid);
  return body;
}

/** Stores the request sealed and starts its workflow; a repeat of the same request finds the running one. */
export async function startOutgoingTransfer(
  deps: TransferRouteDeps,
  id: string,
  request: OutgoingRequest,
): Promise<{ handle: WorkflowHandle<typeof outgoingTransfer>; started: boolean; input: OutgoingTransferInput }> {
  const ctx = needTransfers(deps);
  await ctx.store.put(id, request);
  const input: OutgoingTransferInput = {
    id,
    originatorVaspDid: request.body.originatorVASPdid,
    beneficiaryVaspDid: request.body.beneficiaryVASPdid,
    asset: assetLabel(request.body.transactionAsset),
    amount: request.body.transactionAmount,
    answerDeadlineMs: ctx.config.answerDeadlineMs,
    pollIntervalMs: ctx.config.pollIntervalMs,
    report: ctx.config.callbackUrl !== undefined,
  };
  const workflowId = workflowIds.outgoingTransfer(id);
  try {
    const handle = await deps.temporal.workflow.start(outgoingTransfer, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: TransferStatus, value: 'RECEIVED' },
        { key: SubsidiaryVaspDid, value: input.originatorVaspDid },
        { key: Asset, value: input.asset },
      ],
    });
    // In the console's list from the moment it is accepted; the workflow writes every later state.
    await writeTransferViewUpdate(ctx.pool, outgoingViewUpdate(initialState(input, workflowId, new Date())));
    return { handle, started: true, input };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: deps.temporal.workflow.getHandle<typeof outgoingTransfer>(workflowId), started: false, input };
    }
    throw e;
  }
}

export async function transferState(deps: TransferRouteDeps, id: string): Promise<TransferState> {
  try {
    return await deps.temporal.workflow.getHandle(workflowIds.outgoingTransfer(id)).query(transferStatusQuery);
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new NotFoundError(`no transfer ${id}`, { field: 'id' });
    throw e;
  }
}

/** The internal API of outgoing transfers (issue #5). */
export function transferRoutes(app: FastifyInstance, deps: TransferRouteDeps) {
  app.post(
    '/v1/transfers',
    {
      schema: {
        tags: ['transfers'],
        summary: 'Start an outgoing Travel Rule transfer',
        description:
          'The body is the network\'s tx/create body with plain IVMS101 `originator` and `beneficiary`; the data is ' +
          'encrypted here with the originator\'s key (end-to-end, or hybrid with `?hybrid=1`). The `Idempotency-Key` ' +
          'header names the transfer: repeating a request returns the same transfer. Bad input answers 400 naming the ' +
          'field, and nothing is stored or started.',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        querystring: Type.Object({ hybrid: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')])) }),
        body: OutgoingTransferBody,
        response: { 200: TransferStateSchema, 202: TransferStateSchema },
      },
    },
    async (request: FastifyRequest, reply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key === '') throw new ValidationError('Idempotency-Key', 'is required: a header naming this transfer, so a repeat returns it');
      if (!KEY.test(key)) throw new ValidationError('Idempotency-Key', 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -');
      const ctx = needTransfers(deps);
      const body = await checkOutgoingRequest(ctx, request.body, { requireOriginatorKey: true });
      const hybrid = ['1', 'true'].includes((request.query as { hybrid?: string }).hybrid ?? '');
      const { started, input, handle } = await startOutgoingTransfer(deps, key, { body, source: 'api', hybrid });
      // A new workflow has not run its first task yet: answer with the state it starts in rather than wait for it.
      if (started) return reply.code(202).send(initialState(input, handle.workflowId, new Date()));
      return reply.code(200).send(await transferState(deps, key));
    },
  );

  app.get(
    '/v1/transfers/:id',
    {
      schema: {
        tags: ['transfers'],
        summary: 'Status of an outgoing transfer and its history',
        params: Type.Object({ id: Type.String({ pattern: KEY.source }) }),
        response: { 200: TransferStateSchema },
      },
    },
    async (request) => transferState(deps, (request.params as { id: string }).id),
  );
}
