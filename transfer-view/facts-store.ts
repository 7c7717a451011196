/**
 * Transfers' non-personal facts over a time range, read from the console's projection (transfer_view) for a policy's
 * backtest: metadata and what screening concluded, reduced to booleans (a hit's names never leave the database).
 */
import type { Pool } from 'pg';
import { exactTimestamp } from '../db/listing';

export interface TransferFacts {
  workflowId: string;
  /** The transfer id: outgoing, the caller's; incoming, the network's transaction id. */
  id: string;
  direction: 'incoming' | 'outgoing';
  status: string;
  subsidiaryDid: string | null;
  counterpartyDid: string | null;
  asset: string | null;
  amount: string | null;
  createdAt: string;
  /** Incoming only, once screened by us: whether a sanctions list matched. */
  sanctionsHit: boolean | null;
  /** Incoming only, once screened: false when the personal data could not be decrypted or parsed. */
  personalDataReadable: boolean | null;
}

export interface TransferFactsQuery {
  vaspDids: string[];
  direction?: 'incoming' | 'outgoing';
  from: Date;
  to: Date;
}

/** One page in creation order, after the `after` key (the previous page's last row). */
export async function transferFactsPage(
  pool: Pool,
  query: TransferFactsQuery,
  limit: number,
  after?: { createdAt: string; workflowId: string },
): Promise<TransferFacts[]> {
  const params: unknown[] = [query.vaspDids, query.from, query.to];
  const where = ['subsidiary_did = any($1::text[])', 'created_at >= $2', 'created_at < $3'];
  if (query.direction) {
    params.push(query.direction);
    where.push(`direction = $${params.length}`);
  }
  if (after) {
    params.push(after.createdAt, after.workflowId);
    where.push(`(created_at, workflow_id) > ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  params.push(limit);
  const { rows } = await pool.query<{
    workflow_id: string;
    id: string;
    direction: 'incoming' | 'outgoing';
    status: string;
    subsidiary_did: string | null;
    counterparty_did: string | null;
    asset: string | null;
    amount: string | null;
    created_at: string;
    sanctions_hit: boolean | null;
    readable: boolean | null;
  }>(
    `select workflow_id, id, direction, status, subsidiary_did, counterparty_did, asset, amount,
            ${exactTimestamp('created_at')} as created_at,
            case when coalesce(jsonb_typeof(hits), 'null') <> 'object' or hits->>'skipped' = 'screened-by-network' then null
                 else coalesce(jsonb_array_length(hits->'nameHits'), 0) + coalesce(jsonb_array_length(hits->'addressHits'), 0) > 0
            end as sanctions_hit,
            case when coalesce(jsonb_typeof(hits), 'null') <> 'object' then null
                 else coalesce(hits->>'skipped', '') not in ('undecryptable', 'unreadable')
            end as readable
       from transfer_view where ${where.join(' and ')}
      order by created_at, workflow_id limit $${params.length}`,
    params,
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id,
    id: r.id,
    direction: r.direction,
    status: r.status,
    subsidiaryDid: r.subsidiary_did,
    counterpartyDid: r.counterparty_did,
    asset: r.asset,
    amount: r.amount,
    createdAt: r.created_at,
    sanctionsHit: r.sanctions_hit,
    personalDataReadable: r.readable,
  }));
}
