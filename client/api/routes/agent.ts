import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkOutgoingRequest } from '../../../outgoing/checks';
import { decryptTransactionWith } from '../../../outgoing/personal-data';
import { OutgoingTransferBody } from '../../../outgoing/request';
import {
  createdTransaction,
  needTransfers,
  startOutgoingTransfer,
  transferState,
  type OutgoingStartDeps,
} from '../../transfers/start-outgoing';
import { carriesPersonalData, transactionInfo, withoutPersonalData } from '../../../outgoing/transaction';
import { AppError, isAppError, UpstreamRejectedError, ValidationError } from '../../../lib/errors';
import { issueToValidationError } from '../../../lib/validation';
import { createDidKeyRecord } from '../../../lib/crypto';
import { access } from '../auth/roles';
import { systemPrincipal, type Principal } from '../../../lib/principal';
import { recordPiiRead, txInfoRead } from '../pii-reads';
import { auditedTxUpdate } from '../tx-updates';

const PublicKeyEntry = {
  type: Type.Literal('Ed25519'),
  kid: Type.String(),
  publicKeyHex: Type.String(),
  meta: Type.Object({ algorithms: Type.Array(Type.String()) }),
  kms: Type.Literal('local'),
};
/** The network's JsonDIDKey. */
const JsonDidKey = Type.Object({
  did: Type.String(),
  controllerKeyId: Type.String(),
  keys: Type.Array(Type.Object({ ...PublicKeyEntry, privateKeyHex: Type.String() }), { minItems: 1, maxItems: 1 }),
  services: Type.Array(Type.Never()),
  provider: Type.Literal('did:key'),
});

const Hybrid = Type.Object({ hybrid: Type.Optional(Type.String()) });
const isHybrid = (q: unknown) => ['1', 'true'].includes((q as { hybrid?: string }).hybrid ?? '');

/** Errors as the network (and so the agent that proxies it) answers them: `{err:{name, code, message}}`. */
function networkError(status: number, name: string, message: string, field?: string) {
  return { err: { name, code: status, message, ...(field ? { field } : {}) } };
}

class AgentFailure extends AppError {
  readonly retryable = false;
  constructor(
    readonly httpStatus: number,
    name: string,
    message: string,
    details: Record<string, unknown>,
  ) {
    super(message, details);
    this.name = name;
  }
}

/**
 * The local agent's endpoints, served by this system so an integration written
 * for the agent works unchanged: plain IVMS101 in, encrypted with the keys held here for `originatorVASPdid`, or
 * forwarded unencrypted when it holds none. `/tx/create` goes through the outgoingTransfer workflow (idempotent on
 * transactionRef) and answers the network's Transaction as soon as it exists, without waiting for the counterparty.
 * On the main API they take credentials like every route (the roles below); the agent's contract, no Authorization
 * header, holds only on the loopback agent listener (client/api/agent-server.ts), which installs no authentication.
 * Errors keep the network's shape `{err:{name, code, message}}`, a 401 or 403 included.
 */
export function agentRoutes(app: FastifyInstance, deps: OutgoingStartDeps) {
  void app.register(async (agent) => {
    agent.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.validation && error.validation.length > 0) {
        const e = issueToValidationError(
          error.validation[0] as never,
          error.validationContext === 'body' ? '' : (error.validationContext ?? ''),
        );
        return reply
          .code(400)
          .send(networkError(400, 'NotabeneTransactionValidationError', e.message, e.details.field));
      }
      // The network refused the request itself (a bad id, a bad update): a drop-in agent answers what the network said.
      if (
        error instanceof UpstreamRejectedError &&
        typeof error.details.networkStatus === 'number' &&
        error.details.networkStatus < 500
      ) {
        const status = error.details.networkStatus;
        const name =
          typeof error.details.networkError === 'string' ? error.details.networkError : 'NotabeneTransactionError';
        return reply
          .code(status)
          .send(networkError(status, name, String(error.details.networkMessage ?? error.message)));
      }
      if (isAppError(error)) {
        const status = error.httpStatus;
        const name = error instanceof ValidationError ? 'NotabeneTransactionValidationError' : error.name;
        return reply.code(status).send(networkError(status, name, error.message, error.details.field));
      }
      // Fastify's own refusals of the request (malformed JSON, too large, wrong content type) are the caller's mistake.
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return reply
          .code(error.statusCode)
          .send(networkError(error.statusCode, 'NotabeneTransactionValidationError', `(request): ${error.message}`));
      }
      request.log.error({ err: error }, 'agent request failed');
      return reply.code(500).send(networkError(500, 'InternalServerError', 'internal error; see the API log'));
    });

    agent.get(
      '/didkey/new',
      {
        config: { roles: access.operate },
        schema: {
          tags: ['agent'],
          summary: 'Agent: a new Ed25519 key record',
          description:
            'Not stored: publish its `did` as `pii_didkey` and configure its `privateKeyHex` in `KEYS`, or import it with POST /v1/vasps/{vaspDID}/keys/import.',
          response: { 200: JsonDidKey },
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'no-store');
        return createDidKeyRecord();
      },
    );

    agent.post(
      '/tx/create',
      {
        config: { roles: access.operate },
        schema: {
          tags: ['agent'],
          summary: 'Agent: create a transaction (end-to-end; ?hybrid=1 for hybrid)',
          description:
            'Goes through the outgoingTransfer workflow; transactionRef is the idempotency key (one is generated when absent).',
          querystring: Hybrid,
          body: OutgoingTransferBody,
        },
      },
      async (request) => {
        const ctx = needTransfers(deps);
        const hybrid = isHybrid(request.query);
        const { body, plan } = await checkOutgoingRequest(ctx, request.body, { source: 'agent', hybrid });
        const ref = body.transactionRef ?? randomUUID();
        await startOutgoingTransfer(
          deps,
          ref,
          { body: { ...body, transactionRef: ref }, source: 'agent', hybrid },
          plan,
          callerOf(request),
        );
        // Undefined when the workflow had finished already: what it recorded says what happened.
        const outcome = await createdTransaction(deps, ref);
        if (outcome && 'transaction' in outcome) return outcome.transaction;
        const state = await transferState(deps, ref);
        const error = outcome && 'error' in outcome ? outcome.error : state.error;
        if (state.transactionId) return withoutPersonalData(await transactionInfo(ctx, state.transactionId));
        if (error) {
          const status = error.field ? 400 : 502;
          throw new AgentFailure(
            status,
            error.field ? 'NotabeneTransactionValidationError' : error.type,
            error.message,
            { field: error.field, rule: error.rule },
          );
        }
        throw new AgentFailure(502, 'NotabeneTransactionError', `transfer ${ref} has no transaction yet`, {});
      },
    );

    agent.get(
      '/tx/info',
      {
        // It answers decrypted personal data: compliance only, and each read is audited.
        config: { roles: access.compliance },
        schema: {
          tags: ['agent'],
          summary: 'Agent: a transaction, with its personal data decrypted when the keys of vaspDID are held here',
          description:
            'Without vaspDID (the hybrid form), decrypts with the keys of whichever party this system holds. ' +
            'An answer with personal data is recorded in the audit log first (`pii-read.tx-info`: who, the transaction, never the data); ' +
            'when it cannot be recorded the answer is 503 and holds no data.',
          querystring: Type.Object({
            id: Type.String({ minLength: 1 }),
            vaspDID: Type.Optional(Type.String({ pattern: '^did:' })),
          }),
        },
      },
      async (request) => {
        const ctx = needTransfers(deps);
        const { id, vaspDID } = request.query as { id: string; vaspDID?: string };
        const { tx, decryptedWith } = await decryptTransactionWith(ctx, await transactionInfo(ctx, id), vaspDID);
        // Recorded before it is answered: a read the audit log cannot record fails with 503 and hands out nothing
        // (client/api/pii-reads.ts). An answer without personal data (no keys held here) is not a read of it.
        if (carriesPersonalData(tx)) {
          await recordPiiRead(
            ctx.pool,
            request,
            callerOf(request),
            txInfoRead(ctx.group, tx, {
              listener: listenerOf(request),
              transactionId: id,
              ...(vaspDID ? { vaspDid: vaspDID } : {}),
              ...(decryptedWith ? { decryptedWith } : {}),
            }),
          );
        }
        return tx;
      },
    );

    agent.post(
      '/tx/update',
      {
        config: { roles: access.operate },
        schema: {
          tags: ['agent'],
          summary:
            'Agent: update a transaction; plain originator/beneficiary are encrypted like /tx/create (?hybrid=1 for hybrid)',
          description:
            'Recorded in the audit log before it is sent (`transaction.update.requested`: who, the transaction, the names of the fields, ' +
            'never their values), and again if it is then refused (`transaction.update.refused`); when it cannot be recorded the answer is 503 ' +
            'and nothing is sent.',
          querystring: Hybrid,
          body: Type.Object({ id: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
        },
      },
      async (request) =>
        auditedTxUpdate(needTransfers(deps), request, {
          principal: callerOf(request),
          listener: listenerOf(request),
          body: request.body as Record<string, unknown> & { id: string },
          hybrid: isHybrid(request.query),
        }),
    );
  });
}

/**
 * Who acts: the authenticated caller on the main API; on the loopback agent listener nobody authenticates (the agent's
 * contract), and the listener itself is named, as a system component, in the workflow and the audit log.
 */
const AGENT_LISTENER = systemPrincipal('agent-listener');
const callerOf = (request: FastifyRequest): Principal => request.principal ?? AGENT_LISTENER;
const listenerOf = (request: FastifyRequest): 'api' | 'agent' => (request.principal ? 'api' : 'agent');
