/**
 * A run's upload chunks (address_book_chunks): planned ranges of the delta's additions, each moving planned →
 * uploading → uploaded around its POST, so a chunk is never sent twice.
 */
import type { Pool, PoolClient } from 'pg';

type Db = Pick<Pool | PoolClient, 'query'>;

export interface ChunkRow {
  first_seq: string;
  last_seq: string;
  rows: number;
  bytes: string;
  state: 'planned' | 'uploading' | 'uploaded';
}

export async function getChunk(db: Db, runId: string, chunkNo: number): Promise<ChunkRow | undefined> {
  const { rows } = await db.query<ChunkRow>(
    'select first_seq, last_seq, rows, bytes, state from address_book_chunks where run_id = $1 and chunk_no = $2',
    [runId, chunkNo],
  );
  return rows[0];
}

/** The POST is about to start (or start again). */
export async function markChunkUploading(db: Db, runId: string, chunkNo: number): Promise<void> {
  await db.query(
    `update address_book_chunks set state = 'uploading', attempts = attempts + 1, started_at = now() where run_id = $1 and chunk_no = $2`,
    [runId, chunkNo],
  );
}

/** The network took the chunk; `key` and `counter` are what its answer named (the listing's count when inferred). */
export async function markChunkUploaded(
  db: Db,
  runId: string,
  chunkNo: number,
  key: string | null,
  counter: number | null,
): Promise<void> {
  await db.query(
    `update address_book_chunks set state = 'uploaded', uploaded_at = now(), upload_key = $3, upload_counter = $4
      where run_id = $1 and chunk_no = $2`,
    [runId, chunkNo, key, counter],
  );
}

/** An interrupted POST that the network's count shows to have arrived. */
export async function markChunkUploadedByCount(db: Db, runId: string, chunkNo: number): Promise<void> {
  await db.query(
    `update address_book_chunks set state = 'uploaded', uploaded_at = now(), upload_key = coalesce(upload_key, 'inferred from the listing')
      where run_id = $1 and chunk_no = $2`,
    [runId, chunkNo],
  );
}

/** Nothing (or a refused file) reached the network: the chunk is planned again. */
export async function markChunkPlanned(db: Db, runId: string, chunkNo: number): Promise<void> {
  await db.query(`update address_book_chunks set state = 'planned' where run_id = $1 and chunk_no = $2`, [
    runId,
    chunkNo,
  ]);
}

/** Forgets the run's chunks after `afterChunk` (all of them by default): the diff that plans them runs again. */
export async function deleteChunks(db: Db, runId: string, afterChunk?: number): Promise<void> {
  if (afterChunk === undefined) await db.query('delete from address_book_chunks where run_id = $1', [runId]);
  else await db.query('delete from address_book_chunks where run_id = $1 and chunk_no > $2', [runId, afterChunk]);
}
