import ky from 'ky';
import type { Pool } from 'pg';
import type { GroupConfig } from '../../lib/config';
import { ConfigError } from '../../lib/errors';
import { keyWrapperFromConfig, type Keystore, type KeyWrapper } from '../../db/keystore';
import { BoundedCache } from '../../lib/crypto/bounded-cache';
import type { Logger } from '../../lib/logger';
import type { NetworkClient } from '../network/network-client';
import { toNetworkError } from '../network/network-client';
import { txAction } from '../network/transactions';
import { loadTransferConfig, type TransferConfig } from './config';
import {
  createTransaction,
  FINAL_NETWORK_STATUSES,
  planTransfer,
  storePii,
  transactionInfo,
  type NetworkTransaction,
  type TransferContext,
  type TransferPlan,
} from './engine';
import { validateOutgoingBody } from './request';
import { TransferStore } from './store';

export { loadTransferConfig, type TransferConfig } from './config';
export type { TransferContext, TransferPlan, NetworkTransaction, PiiMode } from './engine';

export interface TransferContextDeps {
  pool: Pool;
  network: NetworkClient;
  keystore: Keystore;
  /** The keystore's wrapper (same master key), which seals stored requests. */
  keyWrapper: KeyWrapper;
  config: TransferConfig;
  group: GroupConfig;
  logger: Logger;
}

export function createTransferContext(deps: TransferContextDeps): TransferContext {
  return {
    pool: deps.pool,
    network: deps.network,
    keystore: deps.keystore,
    store: new TransferStore(deps.pool, deps.keyWrapper),
    config: deps.config,
    group: deps.group,
    logger: deps.logger,
    cache: new BoundedCache(4096),
  };
}

/** What the workflow learns from the network's answer: no personal data. */
export interface CreatedTransaction {
  id: string;
  status: string;
  transactionType?: string;
  beneficiaryVaspDid?: string;
  /** The network's Transaction as created, personal data removed (the agent answers with it). */
  transaction: NetworkTransaction;
}

/** The final status as posted to TRANSFER_CALLBACK_URL. */
export interface TransferReport {
  id: string;
  workflowId: string;
  status: string;
  transactionId?: string;
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  mode?: string;
  error?: { type: string; message: string; field?: string };
  history: { status: string; at: string; source: string }[];
}

/** Outgoing transfer activities. Each is idempotent: a retry finds what the previous attempt stored. */
export function transferActivities(ctx: TransferContext | undefined) {
  const need = (): TransferContext => {
    if (!ctx) throw new ConfigError('BASE_URL', 'the worker was started without the transfer context (no network configured)', 'Start the worker through workers/main.ts with the network variables set');
    return ctx;
  };
  return {
    /** Validates the stored request, refuses a gateway originator, decides the mode, encrypts and stores the PII. */
    async prepareOutgoingTransfer(input: { id: string }): Promise<{ plan: TransferPlan; piiFields: number }> {
      const c = need();
      const request = await c.store.request(input.id);
      validateOutgoingBody(request.body);
      const plan = await planTransfer(c, request);
      const pii = await storePii(c, input.id, request, plan);
      return { plan, piiFields: pii ? countLeaves(pii.tree) : 0 };
    },

    /** Creates the network's transaction (transactionRef = the transfer id, so a retry never creates two). */
    async createOutgoingTransaction(input: { id: string; plan: TransferPlan }): Promise<CreatedTransaction> {
      const c = need();
      const request = await c.store.request(input.id);
      const row = await c.store.get(input.id);
      const tx = await createTransaction(c, input.id, request, input.plan, row.pii);
      return {
        id: tx.id,
        status: tx.status ?? 'NEW',
        transactionType: tx.transactionType,
        beneficiaryVaspDid: tx.beneficiaryVASPdid,
        transaction: tx,
      };
    },

    /** The fallback when webhooks are lost: the transaction's current status. */
    async fetchOutgoingStatus(input: { transactionId: string }): Promise<{ status: string }> {
      const tx = await transactionInfo(need(), input.transactionId);
      return { status: tx.status ?? 'UNKNOWN' };
    },

    /**
     * Withdraws a transaction whose counterparty did not answer before the deadline, so that it cannot accept it (and
     * expect the funds) after the originator has given up. When the network refuses because the transaction is already
     * final, the counterparty's answer won the race and stands: it is returned with `cancelled: false`.
     */
    async cancelOutgoingTransaction(input: { transactionId: string; reason: string }): Promise<{ status: string; cancelled: boolean }> {
      const c = need();
      const { tx, acted } = await txAction(c.network, 'POST /tx/cancel', input.transactionId, FINAL_NETWORK_STATUSES, () =>
        c.network.api.post('tx/cancel', { json: { id: input.transactionId, reason: input.reason } }).json<NetworkTransaction>(),
      );
      const status = tx.status ?? 'CANCELLED';
      return { status, cancelled: acted || status === 'CANCELLED' };
    },

    /** POSTs the final status to TRANSFER_CALLBACK_URL; failures are retried by Temporal. */
    async reportTransferStatus(report: TransferReport): Promise<{ delivered: boolean }> {
      const c = need();
      if (!c.config.callbackUrl) return { delivered: false };
      try {
        await ky.post(c.config.callbackUrl, {
          json: report,
          retry: 0,
          timeout: 10_000,
          headers: { 'Idempotency-Key': `${report.workflowId}:${report.status}` },
        });
      } catch (e) {
        throw await toNetworkError(e, `POST ${c.config.callbackUrl}`);
      }
      return { delivered: true };
    },
  };
}

function countLeaves(tree: unknown): number {
  if (Array.isArray(tree)) return tree.reduce((n: number, v) => n + countLeaves(v), 0);
  if (tree && typeof tree === 'object') return Object.values(tree).reduce((n: number, v) => n + countLeaves(v), 0);
  return typeof tree === 'string' ? 1 : 0;
}

/**
 * The context as a process opens it: the same master key as the keystore (KEYSTORE_MASTER_KEY, or the development key
 * file) seals stored requests. Undefined without a network: the transfer routes and activities then refuse to run.
 */
export function openTransferContext(deps: {
  pool: Pool;
  network: NetworkClient | undefined;
  keystore: Keystore;
  masterKey: string | undefined;
  dataDir: string;
  group: GroupConfig;
  logger: Logger;
  config?: TransferConfig;
}): TransferContext | undefined {
  if (!deps.network) return undefined;
  return createTransferContext({
    pool: deps.pool,
    network: deps.network,
    keystore: deps.keystore,
    keyWrapper: keyWrapperFromConfig(deps.masterKey, deps.dataDir),
    config: deps.config ?? loadTransferConfig(),
    group: deps.group,
    logger: deps.logger,
  });
}
