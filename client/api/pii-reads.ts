/**
 * Reads of customers' personal data through the API, recorded in the audit chain `pii-read`: who read (the
 * authenticated principal, as every audit row names it), through which route, which transaction or workflow — ids
 * and counts, never the data. Auditors ask who looked at which customer's data and when (GDPR access logs, the Travel
 * Rule's data-protection duties); decisions and actions are recorded elsewhere in the log.
 *
 * A chain of its own (chains are keyed by the action's first segment, audit/chain.ts), so reads, which can be
 * many (the Temporal UI decodes a history in many requests), never wait for the lock of the decisions' chains, nor
 * decisions for theirs. One append per request, in a transaction of its own, after the data is decrypted and before
 * it is answered: when the row cannot be written the request fails with 503 (AuditUnavailableError, in the route's
 * error shape) and the decrypted data is dropped, so no personal data leaves the API unrecorded. A request that is
 * refused (401, 403, a bad request, a payload that does not decrypt) reads nothing and writes no row.
 */
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { recordAuditEntry } from '../../audit/store';
import type { GroupConfig } from '../../config';
import { AuditUnavailableError } from '../../lib/errors';
import { inGroup } from '../../lib/group';
import { auditActor, type Principal } from '../../lib/principal';
import type { NetworkTransaction } from '../../network/transactions';
import { workflowIds } from '../../lib/temporal/workflow-ids';

export const PII_READ_ACTIONS = {
  /** `GET /tx/info`, on the API or the agent listener: a transaction with its IVMS101 decrypted here (or echoed plain by the network). */
  txInfo: 'pii-read.tx-info',
  /** `POST /codec/decode`: workflow history payloads decrypted for the Temporal UI or CLI. */
  codecDecode: 'pii-read.codec-decode',
} as const;

export interface PiiRead {
  action: (typeof PII_READ_ACTIONS)[keyof typeof PII_READ_ACTIONS];
  /** What the console searches by: the transaction id, or the workflow id (else the namespace) of decoded history. */
  subject: string;
  /** Which data was read: ids and counts only. */
  details: Record<string, unknown>;
}

/** Appends the read's row; throws AuditUnavailableError (503) when it cannot, and the caller must then answer nothing. */
export async function recordPiiRead(
  pool: Pool,
  request: FastifyRequest,
  principal: Principal,
  read: PiiRead,
): Promise<void> {
  try {
    await recordAuditEntry(pool, {
      actor: auditActor(principal),
      action: read.action,
      subject: read.subject,
      details: { route: `${request.method} ${request.routeOptions.url}`, ...read.details, principal },
    });
  } catch (e) {
    request.log.error(
      { err: e, action: read.action, subject: read.subject },
      'a read of personal data could not be audited, so it was refused',
    );
    throw new AuditUnavailableError(
      'the audit log could not record this read of personal data, so nothing was handed out; try again shortly',
      { action: read.action },
    );
  }
}

/**
 * A `/tx/info` answer: the transaction, the group's transfer and workflows it belongs to (an outgoing transfer's id is
 * the transaction's `transactionRef` when the group sent it; an incoming transfer's workflow is named by the
 * transaction id when the group receives it), the VASP asked for, and whose keys decrypted it (null: the network
 * gave the data in plain, hosted mode).
 */
export function txInfoRead(
  group: GroupConfig,
  tx: NetworkTransaction,
  read: { listener: 'api' | 'agent'; transactionId: string; vaspDid?: string; decryptedWith?: string },
): PiiRead {
  const transactionId = typeof tx.id === 'string' ? tx.id : read.transactionId;
  const transferId =
    inGroup(group, tx.originatorVASPdid) && typeof tx.transactionRef === 'string' ? tx.transactionRef : undefined;
  const workflows = [
    ...(transferId !== undefined ? [workflowIds.outgoingTransfer(transferId)] : []),
    ...(inGroup(group, tx.beneficiaryVASPdid) ? [workflowIds.incomingTransfer(transactionId)] : []),
  ];
  return {
    action: PII_READ_ACTIONS.txInfo,
    subject: transactionId,
    details: {
      listener: read.listener,
      transactionId,
      transferId: transferId ?? null,
      workflowIds: workflows,
      vaspDid: read.vaspDid ?? null,
      decryptedWith: read.decryptedWith ?? null,
    },
  };
}

/** What a codec request says of the history it decodes (X-Namespace, and X-Workflow-Id / X-Run-Id when sent). */
export interface CodecRequestIds {
  namespace?: string;
  workflowId?: string;
  runId?: string;
}

/**
 * A `/codec/decode` request: one row for all its payloads, with how many there were and how many were encrypted (and
 * so decrypted). The ids are as the caller states them: the codec cannot tell which history the payloads came from.
 */
export function codecDecodeRead(ids: CodecRequestIds, payloads: number, decrypted: number): PiiRead {
  return {
    action: PII_READ_ACTIONS.codecDecode,
    subject: ids.workflowId ?? ids.namespace ?? '(no namespace)',
    details: {
      namespace: ids.namespace ?? null,
      workflowId: ids.workflowId ?? null,
      runId: ids.runId ?? null,
      payloads,
      decrypted,
    },
  };
}
