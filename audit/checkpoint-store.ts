import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../db/transaction';
import { auditChainHeads } from './store';
import { sameHeads, signCheckpoint, type AuditCheckpoint, type CheckpointKeyring } from './checkpoint-signature';
import type { ChainHead } from './chain';

interface Raw {
  seq: string;
  at: string;
  heads: ChainHead[];
  key_id: string;
  mac: string;
}
const MILLIS = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `seq, ${MILLIS('at')} as at, heads, key_id, mac`;
const toCheckpoint = (r: Raw): AuditCheckpoint => ({
  seq: Number(r.seq),
  at: r.at,
  heads: r.heads.map((h) => ({ chain: h.chain, seq: Number(h.seq), hash: h.hash })),
  keyId: r.key_id,
  mac: r.mac,
});

/**
 * Signs every chain's committed head as the next checkpoint. Writers (several API processes) take turns on the
 * table's lock, so numbers never repeat or skip. With `unlessUnchangedFor`, nothing is written while the heads are
 * those of the newest checkpoint and it is younger than that many milliseconds: an idle log gets one a period.
 */
export async function writeAuditCheckpoint(
  pool: Pool,
  keyring: CheckpointKeyring,
  opts: { unlessUnchangedFor?: number } = {},
): Promise<AuditCheckpoint | undefined> {
  return withTransaction(pool, async (tx) => {
    // Conflicts with itself, not with appends (they never touch this table).
    await tx.query('lock table audit_checkpoints in share row exclusive mode');
    const heads = await auditChainHeads(tx);
    const last = await newestCheckpoint(tx);
    // The database's clock, as the audit rows' times are; to the millisecond, as JavaScript's ISO strings are.
    const now = await tx.query<{ at: string }>(`select ${MILLIS('clock_timestamp()')} as at`);
    const at = now.rows[0]!.at;
    if (
      last &&
      opts.unlessUnchangedFor !== undefined &&
      sameHeads(last.heads, heads) &&
      Date.parse(at) - Date.parse(last.at) < opts.unlessUnchangedFor
    ) {
      return undefined;
    }
    const checkpoint = signCheckpoint(keyring, { seq: (last?.seq ?? 0) + 1, at, heads });
    await tx.query('insert into audit_checkpoints (seq, at, heads, key_id, mac) values ($1, $2, $3, $4, $5)', [
      checkpoint.seq,
      checkpoint.at,
      JSON.stringify(checkpoint.heads),
      checkpoint.keyId,
      checkpoint.mac,
    ]);
    return checkpoint;
  });
}

export async function newestCheckpoint(db: Pick<Pool | PoolClient, 'query'>): Promise<AuditCheckpoint | undefined> {
  const { rows } = await db.query<Raw>(`select ${COLUMNS} from audit_checkpoints order by seq desc limit 1`);
  return rows[0] && toCheckpoint(rows[0]);
}

/** Every checkpoint in order, a batch at a time. */
export async function* readCheckpoints(
  db: Pick<Pool | PoolClient, 'query'>,
  batch = 5000,
): AsyncGenerator<AuditCheckpoint> {
  let after = 0;
  for (;;) {
    const { rows } = await db.query<Raw>(
      `select ${COLUMNS} from audit_checkpoints where seq > $1 order by seq limit $2`,
      [after, batch],
    );
    for (const r of rows) yield toCheckpoint(r);
    if (rows.length < batch) return;
    after = Number(rows[rows.length - 1]!.seq);
  }
}

/** The hash of each chain's row at the given seq, for the chains that have one. */
export async function hashesAt(db: Pick<Pool | PoolClient, 'query'>, at: ChainHead[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ chain: string; hash: string }>(
    'select l.chain, l.hash from audit_log l join unnest($1::text[], $2::bigint[]) as c(chain, seq) on l.chain = c.chain and l.seq = c.seq',
    [at.map((h) => h.chain), at.map((h) => h.seq)],
  );
  return new Map(rows.map((r) => [r.chain, r.hash]));
}
