/**
 * Rebuilds the console's transfer list (transfer_view) should it be lost: the network knows every transaction of the
 * group, and the running workflows know where each unfinished one stands. Rows already present with a newer version
 * are left alone, so the rebuild can run on a live system and fill gaps only.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { txListPages } from '../../network/transactions';
import type { NetworkClient } from '../../network/client';
import { writeTransferViewUpdate } from '../../transfer-view/store';
import type { GroupConfig } from '../../config';
import type { Logger } from '../../lib/logger';
import { isFinalNetworkStatus } from '../../lib/network-status';
import type { TransferViewUpdate } from '../../transfer-view/types';
import { incomingViewUpdate, outgoingViewUpdate } from '../../transfer-view/status';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { incomingStatusQuery } from '../../workflows/incoming-transfer.messages';
import { transferStatusQuery } from '../../workflows/outgoing-transfer.messages';

interface ListedTx {
  id: string;
  status?: string;
  transactionRef?: string;
  transactionAsset?: unknown;
  transactionAmount?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  createdAt?: string;
}

const assetOf = (a: unknown): string | undefined => {
  if (typeof a === 'string') return a;
  if (a && typeof a === 'object') {
    const o = a as Record<string, unknown>;
    if (typeof o.caip19 === 'string') return o.caip19;
    if (typeof o.coingeckoId === 'string') return o.network ? `${o.coingeckoId}@${String(o.network)}` : o.coingeckoId;
  }
  return undefined;
};

export interface RebuildDeps {
  pool: Pool;
  network: NetworkClient;
  temporal: Client;
  group: GroupConfig;
  logger: Logger;
}

export interface RebuildResult {
  /** Transactions the network listed for the group's VASPs. */
  listed: number;
  /** Rows written from the network's record (version 0: any write of a workflow wins over them). */
  fromNetwork: number;
  /** Rows written from a running workflow's own state. */
  fromWorkflows: number;
}

/** The rows the network's record alone gives: one per direction the group takes part in. */
export function rowsFromNetwork(tx: ListedTx, group: Set<string>): TransferViewUpdate[] {
  const status = tx.status ?? 'UNKNOWN';
  const common = {
    status,
    final: isFinalNetworkStatus(status),
    needsReview: false,
    needsRouting: false,
    escalated: false,
    asset: assetOf(tx.transactionAsset),
    amount: tx.transactionAmount,
    createdAt: tx.createdAt ?? new Date().toISOString(),
    version: 0,
  };
  const rows: TransferViewUpdate[] = [];
  if (tx.originatorVASPdid && group.has(tx.originatorVASPdid)) {
    const id = tx.transactionRef ?? tx.id;
    rows.push({
      ...common,
      workflowId: workflowIds.outgoingTransfer(id),
      direction: 'outgoing',
      id,
      transactionId: tx.id,
      reference: id,
      subsidiaryDid: tx.originatorVASPdid,
      counterpartyDid: tx.beneficiaryVASPdid,
    });
  }
  if (tx.beneficiaryVASPdid && group.has(tx.beneficiaryVASPdid)) {
    rows.push({
      ...common,
      workflowId: workflowIds.incomingTransfer(tx.id),
      direction: 'incoming',
      id: tx.id,
      transactionId: tx.id,
      reference: tx.transactionRef,
      phase: common.final ? 'completed' : undefined,
      subsidiaryDid: tx.beneficiaryVASPdid,
      counterpartyDid: tx.originatorVASPdid,
    });
  }
  return rows;
}

/** The row a running workflow would write now, from its status query; undefined when it no longer runs. */
async function rowFromWorkflow(temporal: Client, row: TransferViewUpdate): Promise<TransferViewUpdate | undefined> {
  const handle = temporal.workflow.getHandle(row.workflowId);
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return undefined;
    if (row.direction === 'outgoing') return outgoingViewUpdate(await handle.query(transferStatusQuery));
    const state = await handle.query(incomingStatusQuery);
    return incomingViewUpdate(state, {
      workflowId: row.workflowId,
      createdAt: row.createdAt,
      counterpartyDid: row.counterpartyDid,
      amount: row.amount,
      reference: row.reference,
    });
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return undefined;
    throw e;
  }
}

export async function rebuildTransferView(deps: RebuildDeps): Promise<RebuildResult> {
  const group = new Set([...(deps.group.gatewayDid ? [deps.group.gatewayDid] : []), ...deps.group.subsidiaryDids]);
  const seen = new Set<string>();
  const result: RebuildResult = { listed: 0, fromNetwork: 0, fromWorkflows: 0 };
  for (const vaspDid of group) {
    for await (const transactions of txListPages<ListedTx>(deps.network, { vaspDID: vaspDid, sort: 'createdAt:ASC' })) {
      for (const tx of transactions) {
        result.listed++;
        for (const row of rowsFromNetwork(tx, group)) {
          if (seen.has(row.workflowId)) continue;
          seen.add(row.workflowId);
          const live = row.final ? undefined : await rowFromWorkflow(deps.temporal, row);
          await writeTransferViewUpdate(deps.pool, live ?? row);
          if (live) result.fromWorkflows++;
          else result.fromNetwork++;
        }
      }
    }
  }
  deps.logger.info(result, 'transfer list rebuilt from the network');
  return result;
}
